"""Suite-wide settings: one torch thread (RL nets are small; on 2 shared cores more threads only add
contention), and Ctrl-C's default disposition for the processes the tests start.

A shell starts a background job (``cmd &`` without job control, as CI runners and ``nohup`` do) with
SIGINT ignored, and every child inherits that: a ``stride`` process the tests interrupt with SIGINT
before its run installs its handler would then drop the signal, and a test of what Ctrl-C does
would pass or fail by timing. The tests stand for a user's terminal, so the suite restores Python's
own SIGINT handler; the processes it starts then begin with SIGINT's default, as from a terminal.
"""

import signal

import torch

torch.set_num_threads(1)

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
