"""Messages on a worker's pipe without ``multiprocessing.Connection``'s Python layers.

Same framing as ``Connection.send_bytes`` / ``recv_bytes`` (a 4-byte big-endian length, then the
payload), so both ends may mix these with the Connection methods (the handshake and descriptor
passing use those). Why: the stepping loop sends and receives one message per worker per step,
and ``Connection`` spends ~4 us of Python per send/receive pair around two ~0.5 us syscalls.
"""

from __future__ import annotations

import os
import struct

_HEADER = struct.Struct("!i")
_LONG = struct.Struct("!Q")
_MAX_SHORT = 0x7FFFFFFF


def send_blob(fd: int, blob: bytes) -> None:
    """Write one framed message (header and payload in one ``write`` when they fit)."""
    n = len(blob)
    if n > _MAX_SHORT:
        data = memoryview(_HEADER.pack(-1) + _LONG.pack(n) + blob)
    else:
        data = memoryview(_HEADER.pack(n) + blob)
    while data:
        data = data[os.write(fd, data):]


def _read_exact(fd: int, n: int) -> bytes:
    data = os.read(fd, n)
    if len(data) == n:
        return data
    if not data:
        raise EOFError
    buf = bytearray(data)
    while len(buf) < n:
        more = os.read(fd, n - len(buf))
        if not more:
            raise EOFError
        buf += more
    return bytes(buf)


def recv_blob(fd: int) -> bytes:
    """Read one framed message (blocks until it is complete); ``EOFError`` when the peer is gone."""
    (n,) = _HEADER.unpack(_read_exact(fd, 4))
    if n == -1:
        (n,) = _LONG.unpack(_read_exact(fd, 8))
    return _read_exact(fd, n) if n else b""
