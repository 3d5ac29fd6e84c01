"""NumPy's ``SeedSequence -> PCG64`` seeding, vectorised over many integer seeds.

``gymnasium.Env.reset(seed=s)`` builds ``Generator(PCG64(SeedSequence(s)))``: ~14 us per call on
this machine (``generate_state`` is a Python-level loop), several CartPole steps' worth, paid at
every episode by a collector that gives each episode its own seed. The hash is plain 32-bit
integer arithmetic, so it runs here on arrays, once for a block of upcoming episode seeds
(~1 us per seed); :func:`pcg64_states` then turns each seed's words into the exact ``PCG64.state`` that NumPy
would build, which an env loads into its existing generator (~1 us). Same seed, same
bits: tests compare against ``np.random.PCG64(seed).state`` directly.

Only seeds that are one 32-bit word (``0 <= seed < 2**32``) take this path, the range every
Stride seed stream draws from; :func:`pcg64_seed_words` refuses others.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np
import numpy.typing as npt

# numpy/random/bit_generator.pyx
_INIT_A = 0x43B0D7E5
_MULT_A = 0x931E8875
_INIT_B = 0x8B51F9DD
_MULT_B = 0x58F38DED
_MIX_MULT_L = 0xCA01F9DD
_MIX_MULT_R = 0x4973F715
_XSHIFT = np.uint32(16)
_POOL_SIZE = 4
_M32 = 0xFFFFFFFF
# numpy/random/src/pcg64: the 128-bit LCG multiplier
_PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645
_M128 = (1 << 128) - 1


def _hash_constants(init: int, mult: int, n: int) -> List[Tuple[int, int]]:
    """The running hash constant after each of ``n`` uses (it never depends on the data)."""
    out, h = [], init
    for _ in range(n):
        used = h
        h = (h * mult) & _M32
        out.append((used, h))
    return out


# mix_entropy: 4 hashmix of the entropy words, then 12 cross-mixes, each one hashmix
_HASH_A = _hash_constants(_INIT_A, _MULT_A, _POOL_SIZE + _POOL_SIZE * (_POOL_SIZE - 1))
# generate_state(4, uint64): 8 uint32 output words
_HASH_B = _hash_constants(_INIT_B, _MULT_B, 8)


def _hashmix(value: npt.NDArray[np.uint32], consts: Tuple[int, int]) -> npt.NDArray[np.uint32]:
    xor_with, mult_by = consts
    value = (value ^ np.uint32(xor_with)) * np.uint32(mult_by)
    return value ^ (value >> _XSHIFT)


def _mix(x: npt.NDArray[np.uint32], y: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    r: npt.NDArray[np.uint32] = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
    out: npt.NDArray[np.uint32] = r ^ (r >> _XSHIFT)
    return out


def pcg64_seed_words(seeds: Sequence[int]) -> npt.NDArray[np.uint64]:
    """``SeedSequence(s).generate_state(4, np.uint64)`` for each seed: an ``(n, 4)`` uint64 array."""
    s = np.asarray(seeds, dtype=np.int64)
    if s.size and (s.min() < 0 or s.max() > _M32):
        raise ValueError(f"pcg64_seed_words takes seeds in [0, 2**32), got {int(s.min())}..{int(s.max())}")
    entropy = s.astype(np.uint32)
    consts = iter(_HASH_A)
    zero = np.zeros_like(entropy)
    with np.errstate(over="ignore"):
        pool = [_hashmix(entropy if i == 0 else zero, next(consts)) for i in range(_POOL_SIZE)]
        for i_src in range(_POOL_SIZE):
            for i_dst in range(_POOL_SIZE):
                if i_src != i_dst:
                    pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], next(consts)))
        words = np.empty((len(entropy), 8), dtype=np.uint32)
        for i, c in enumerate(_HASH_B):
            words[:, i] = _hashmix(pool[i % _POOL_SIZE], c)
    return words.view("<u8").astype(np.uint64)


def pcg64_states(seeds: Sequence[int]) -> List[Dict[str, object]]:
    """``np.random.PCG64(s).state`` for each seed, as the dicts ``PCG64.state`` accepts."""
    out: List[Dict[str, object]] = []
    for a, b, c, d in pcg64_seed_words(seeds).tolist():  # pcg64_set_seed: srandom(state=a:b, seq=c:d)
        inc = ((((c << 64) | d) << 1) | 1) & _M128
        state = ((((inc + ((a << 64) | b)) & _M128) * _PCG_MULT) + inc) & _M128  # step, add, step
        out.append({"bit_generator": "PCG64", "state": {"state": state, "inc": inc}, "has_uint32": 0, "uinteger": 0})
    return out
