"""``wire.py`` frames messages exactly as ``multiprocessing.Connection`` does (both ends mix them)."""

from __future__ import annotations

import multiprocessing as mp
import threading

import pytest

from stride.envs.env_manager.wire import recv_blob, send_blob


@pytest.mark.parametrize("size", [0, 5, 4096, 3 * 1024 * 1024])  # the last one needs partial writes/reads
def test_wire_and_connection_read_each_other(size):
    a, b = mp.Pipe(duplex=True)
    try:
        blob = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        t = threading.Thread(target=send_blob, args=(a.fileno(), blob))
        t.start()
        assert b.recv_bytes() == blob
        t.join()
        t = threading.Thread(target=b.send_bytes, args=(blob,))
        t.start()
        assert recv_blob(a.fileno()) == blob
        t.join()
        send_blob(a.fileno(), b"one")
        send_blob(a.fileno(), b"two")  # back to back: each read takes exactly one message
        assert recv_blob(b.fileno()) == b"one" and b.recv_bytes() == b"two"
    finally:
        a.close()
        b.close()


def test_recv_blob_raises_eof_when_the_peer_is_gone():
    a, b = mp.Pipe(duplex=True)
    b.close()
    with pytest.raises(EOFError):
        recv_blob(a.fileno())
    a.close()
