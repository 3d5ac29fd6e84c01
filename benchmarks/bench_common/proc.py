"""Contestant-process helpers (no Stride, no SB3 imports here).

Every contestant runs in its own fresh process, calls :func:`setup_process` first (one torch
thread, seeded RNGs) and measures *process CPU time* (``time.process_time``: user + system of
all threads of this process), never wall time.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from typing import Optional

import numpy as np


def setup_process(seed: int) -> dict:
    """One torch thread, Python / NumPy / torch RNGs seeded; returns torch facts for the record."""
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return {"torch_threads": torch.get_num_threads(), "torch": torch.__version__}


def cpu() -> float:
    """Process CPU seconds (user + system, all threads of this process)."""
    return time.process_time()


def emit(result: dict, out: Optional[str]) -> None:
    """Write ``result`` as JSON to ``out`` atomically (if given) and print it as a ``RESULT`` line."""
    text = json.dumps(result, sort_keys=True)
    if out:
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, out)
    print("RESULT " + text, flush=True)


def log(msg: str) -> None:
    """A line on stderr (the per-process log)."""
    print(msg, file=sys.stderr, flush=True)
