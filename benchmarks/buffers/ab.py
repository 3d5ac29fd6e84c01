"""In-process A/B timing of Stride's replay sampling: this checkout against an older revision.

    benchmarks/.venv-buffers/bin/python benchmarks/buffers/ab.py --old-rev 8b5a9af [--rounds 15] [--new-cfg replace=True]

The old revision's ``stride`` package is extracted (``git archive``) into a temporary folder and
imported as ``stride_old``, so both run in one process on the same items (the benchmark's float4
case: 40k items in a 100k buffer) and take turns in short blocks (old, new, new, old, ...): a
neighbour's burst of load lands on both alike, which separate processes cannot promise on a shared
box. Reported per operation: the median time per call of each side and the median of the per-round
ratios new / old. ``--new-cfg key=value`` sets buffer config keys of the new side only (e.g.
``replace=True``: the with-replacement mode, which the old code always used).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CAP, N_ITEMS = 100_000, 40_000


def import_old(rev: str) -> Any:
    """The ``stride`` package of ``rev``, imported as ``stride_old`` (its absolute ``stride.`` imports rewritten)."""
    tmp = tempfile.mkdtemp(prefix="stride_ab_")
    archive = subprocess.run(["git", "-C", REPO, "archive", rev, "stride"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    os.rename(os.path.join(tmp, "stride"), os.path.join(tmp, "stride_old"))
    for folder, _, files in os.walk(os.path.join(tmp, "stride_old")):  # absolute imports of the old package
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path) as f:
                    src = f.read()
                fixed = re.sub(r"\b(from|import) stride([. ])", r"\1 stride_old\2", src)
                if fixed != src:
                    with open(path, "w") as f:
                        f.write(fixed)
    sys.path.insert(0, tmp)
    import stride_old.data  # noqa: F401

    return sys.modules["stride_old.data"]


def items(n: int) -> List[Dict[str, Any]]:
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(n, 4)).astype(np.float32)
    nxt = rng.normal(size=(n, 4)).astype(np.float32)
    act = rng.integers(0, 2, size=n)
    rew = rng.normal(size=n).astype(np.float32)
    done = rng.random(n) < 0.05
    return [{"obs": obs[i], "action": int(act[i]), "reward": float(rew[i]), "next_obs": nxt[i], "done": bool(done[i])}
            for i in range(n)]


def side(data: Any, extra: Dict[str, Any], its: List[Dict[str, Any]]) -> Dict[str, Callable[[], Any]]:
    """The benchmark's sampling operations on one side's buffers."""
    def cfg(cls: Any) -> Dict[str, Any]:  # (the keys this buffer knows: max_use is advanced only)
        return {k: v for k, v in extra.items() if k in cls.default_config()}

    naive = data.NaiveReplayBuffer({"replay_buffer_size": CAP, **cfg(data.NaiveReplayBuffer)}, seed=0)
    adv = data.AdvancedReplayBuffer({"replay_buffer_size": CAP, "priority": False, **cfg(data.AdvancedReplayBuffer)}, seed=0)
    per = data.AdvancedReplayBuffer({"replay_buffer_size": CAP, "priority": True, **cfg(data.AdvancedReplayBuffer)}, seed=0)
    for s in range(0, len(its), 1000):
        for b in (naive, adv, per):
            b.push(its[s:s + 1000])
    rng = np.random.default_rng(1)

    def per64() -> None:
        _, ticket = per.sample_batch(64)
        per.update(ticket, rng.random(64) + 0.01)

    def per64_list() -> None:
        s = per.sample(64)
        per.update({"replay_unique_id": [d["replay_unique_id"] for d in s],
                    "replay_buffer_idx": [d["replay_buffer_idx"] for d in s], "priority": rng.random(64) + 0.01})

    # one-at-a-time pushes (the collector's path) into buffers of their own, cycling through the items
    push_naive = data.NaiveReplayBuffer({"replay_buffer_size": CAP, **cfg(data.NaiveReplayBuffer)}, seed=0)
    push_adv = data.AdvancedReplayBuffer({"replay_buffer_size": CAP, **cfg(data.AdvancedReplayBuffer)}, seed=0)
    cursor = [0]

    def push1(b: Any) -> None:
        b.push(its[cursor[0] % len(its)])
        cursor[0] += 1

    return {"naive push1": lambda: push1(push_naive), "advanced push1 (prioritized)": lambda: push1(push_adv),
            "naive sample64": lambda: naive.sample(64), "naive sample_batch64": lambda: naive.sample_batch(64),
            "naive sample256": lambda: naive.sample(256), "naive sample_batch256": lambda: naive.sample_batch(256),
            "advanced sample64": lambda: adv.sample(64), "advanced sample_batch64": lambda: adv.sample_batch(64),
            "advanced sample256": lambda: adv.sample(256), "per64": per64, "per64_list": per64_list}


def block(fn: Callable[[], Any], calls: int) -> float:
    """Seconds of process CPU per call over ``calls`` calls (after a fifth as many untimed ones)."""
    for _ in range(max(calls // 5, 1)):
        fn()
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old-rev", default="8b5a9af")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--new-cfg", nargs="*", default=[], help="key=value buffer config of the new side")
    ap.add_argument("--cfg", nargs="*", default=[], help="key=value buffer config of both sides (e.g. max_use=100)")
    ap.add_argument("--only", nargs="*", default=None, help="operations to time (default: all)")
    args = ap.parse_args()
    sys.path.insert(0, REPO)
    import torch

    torch.set_num_threads(1)
    import stride.data as new

    old = import_old(args.old_rev)
    extra = {k: ast.literal_eval(v) for k, v in (kv.split("=", 1) for kv in args.new_cfg)}
    both = {k: ast.literal_eval(v) for k, v in (kv.split("=", 1) for kv in args.cfg)}
    its = items(N_ITEMS)
    ops_old, ops_new = side(old, both, its), side(new, {**both, **extra}, its)
    names = args.only or list(ops_old)
    times: Dict[str, Tuple[List[float], List[float]]] = {op: ([], []) for op in names}
    up0 = os.getloadavg()
    for r in range(args.rounds):
        for op in names:
            calls = args.calls // 4 if "256" in op else args.calls
            pair = ((0, ops_old), (1, ops_new)) if r % 2 == 0 else ((1, ops_new), (0, ops_old))
            for k, ops in pair:
                times[op][k].append(block(ops[op], calls))
    up1 = os.getloadavg()
    print(f"# old {args.old_rev} vs this checkout{' with ' + str(extra) if extra else ''}"
          f"{'; both with ' + str(both) if both else ''}; {args.rounds} rounds "
          f"of interleaved blocks; load average {up0[0]:.2f} -> {up1[0]:.2f}")
    print(f"{'operation':<26}{'old us':>9}{'new us':>9}{'new/old':>9}   (median of per-round ratios)")
    for op in names:
        o, n = times[op]
        ratio = statistics.median(b / a for a, b in zip(o, n))
        print(f"{op:<26}{statistics.median(o) * 1e6:9.2f}{statistics.median(n) * 1e6:9.2f}{ratio:9.3f}")


if __name__ == "__main__":
    main()
