"""Replay buffer throughput: Stride (naive, advanced) vs Tianshou, TorchRL, SB3 and a bare NumPy ring.

    bash benchmarks/buffers/run.sh [--quick] [--reps 5] [--rounds 3] [--only stride_naive bare ...] [--cases float4 atari]

Capacity 100k; items {obs, action, reward, next_obs, done} with obs float32[4] ("float4") or
uint8[4,84,84] ("atari"). Operations (ops/s = calls per process-CPU second, median of --reps blocks):

    push1        push one item per call
    push8        push a batch of 8 items per call (Tianshou: VectorReplayBuffer with 8 sub-buffers,
                 SB3: a second buffer with n_envs=8 -- each library's own batched path)
    sample64     uniform sample of 64 (Stride: list-of-dicts ``sample`` AND columns ``sample_batch``)
    sample256    uniform sample of 256
    per64        prioritized sample of 64 + priority update of those 64
    sample_distinct64  bare ring only: 64 distinct items (``Generator.choice(replace=False)``), the
                 like-for-like baseline of Stride's default batches (distinct items since issue 13)

Stride runs twice per buffer: the default (``replace=False``: distinct items per batch) and
``replace=True`` (i.i.d. draws, what every buffer did before issue 13): ``stride_*_replace``.

Each contestant runs in its own fresh process (clean CPU accounting), torch with 1 thread; the
contestants take turns, ``--rounds`` times, and each number is the median over rounds (the machine
is shared: interleaving spreads the neighbours' load over everyone).
Before sampling, a buffer holds what push1 + push8 put there (float4: 40k items; atari: 4k items).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

import contestants  # each library's buffer behind one interface
from contestants import CASES, CLASSES

CAP = 100_000
CONTESTANTS = ["bare", "stride_naive", "stride_advanced", "stride_naive_replace", "stride_advanced_replace",
               "tianshou", "torchrl", "sb3",
               "stride_naive_frames", "stride_advanced_frames", "sb3_optimize", "tianshou_frames"]
# atari_frames: real frame streams (obs of one step = the 4 newest frames; next_obs shifts one frame in), where
# storing each frame once applies; the contestants that store full stacks run there too, for the ratios
FRAMES_ONLY = ("stride_naive_frames", "stride_advanced_frames", "sb3_optimize", "tianshou_frames")
CASE_CONTESTANTS = {"float4": [c for c in CONTESTANTS if c not in FRAMES_ONLY],
                    "atari": [c for c in CONTESTANTS if c not in FRAMES_ONLY],
                    "atari_frames": ["bare", "stride_naive", "stride_naive_frames", "stride_advanced_frames", "sb3",
                                     "sb3_optimize", "tianshou_frames"]}
EPISODE = 500  # atari_frames: agent steps per episode (a reset stack of 4 equal frames starts each)


def frame_streams(n: int, n_env: int, seed: int) -> Dict[str, np.ndarray]:
    """``n`` transitions of ``n_env`` envs taking steps in turn (env 0's step t, env 1's step t, ...: what
    a vectorised collector pushes); each env plays episodes of ``EPISODE`` steps of fresh random frames,
    each episode's first stack four copies of its reset frame."""
    rng = np.random.default_rng(seed)
    steps = -(-n // n_env)
    n_ep = -(-steps // EPISODE)
    frames = rng.integers(0, 255, size=(n_env, n_ep, EPISODE + 1, 84, 84), dtype=np.uint8)
    t = np.arange(steps)
    ep, s = t // EPISODE, t % EPISODE
    j = np.arange(4)
    u_obs = np.maximum(s[:, None] - 3 + j, 0)  # (steps, 4): the frames of each step's obs in its episode
    u_next = np.maximum(s[:, None] - 2 + j, 0)
    obs = frames[:, ep[:, None], u_obs].transpose(1, 0, 2, 3, 4)  # (steps, n_env, 4, 84, 84)
    nxt = frames[:, ep[:, None], u_next].transpose(1, 0, 2, 3, 4)
    done = np.repeat((s == EPISODE - 1)[:, None], n_env, axis=1)
    return {"obs": obs.reshape(-1, 4, 84, 84)[:n], "next_obs": nxt.reshape(-1, 4, 84, 84)[:n],
            "done": done.reshape(-1)[:n], "action": rng.integers(0, 2, size=n).astype(np.int64),
            "reward": rng.normal(size=n).astype(np.float32)}


def make_items(case: str, n: int, seed: int = 0) -> Dict[str, np.ndarray]:
    shape, dtype = CASES[case]
    if case == "atari_frames":  # the first half one env's stream (push1), the second 8 envs in turn (push8)
        one, eight = frame_streams(n // 2, 1, seed), frame_streams(n - n // 2, 8, seed + 1)
        return {k: np.concatenate([one[k], eight[k]]) for k in one}
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        obs = rng.integers(0, 255, size=(n, *shape), dtype=np.uint8)
        nxt = np.roll(obs, 1, axis=0)
    else:
        obs = rng.normal(size=(n, *shape)).astype(dtype)
        nxt = rng.normal(size=(n, *shape)).astype(dtype)
    return {"obs": obs, "action": rng.integers(0, 2, size=n).astype(np.int64),
            "reward": rng.normal(size=n).astype(np.float32), "next_obs": nxt, "done": rng.random(n) < 0.05}


def timed(fn: Callable[[], Any], calls: int, reps: int) -> float:
    """ops/s: median over ``reps`` blocks of ``calls`` calls, process CPU time."""
    fn()  # warm
    rates = []
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        dt = time.process_time() - t0
        rates.append(calls / max(dt, 1e-9))
    return statistics.median(rates)


def timed_stream(fn: Callable[[int], Any], total: int, reps: int) -> float:
    """ops/s for calls that consume a stream (pushes): ``total`` calls split into ``reps`` blocks."""
    per = total // reps
    rates, k = [], 0
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(per):
            fn(k)
            k += 1
        rates.append(per / max(time.process_time() - t0, 1e-9))
    return statistics.median(rates)


# ================================================================================ contestants




def setup(name: str, case: str, reps: int, quick: bool) -> Tuple[Dict[str, Any], Dict[str, Tuple[Callable[[], Any], int]]]:
    """Build contestant ``name``, time its pushes (push1, push8: streams, measured once), fill the
    buffers that are sampled; returns the push results and the sampling operations ``{op: (fn, calls)}``."""
    import torch

    torch.set_num_threads(1)
    n_push = (20_000 if case == "float4" else 2_000) // (4 if quick else 1)
    cols = make_items(case, 2 * n_push)
    items = [{k: v[i] for k, v in cols.items()} for i in range(2 * n_push)]
    c = CLASSES[name](case)
    out: Dict[str, Any] = {"name": c.name}
    out["push1"] = timed_stream(lambda k: c.push1(items[k]), n_push, reps)
    n8 = n_push // 8
    if not name.startswith("stride"):
        batches = [{k: v[n_push + 8 * j: n_push + 8 * j + 8] for k, v in cols.items()} for j in range(n8)]
    else:  # Stride takes lists of dicts (the collector's output)
        batches = [items[n_push + 8 * j: n_push + 8 * j + 8] for j in range(n8)]
    out["push8"] = timed_stream(lambda k: c.push8(batches[k]), n8, reps)
    if hasattr(c, "top_up"):  # push8 went to a separate vector buffer: give the sampled one the same items
        c.top_up(items[n_push: n_push + 8 * n8])
    if hasattr(c, "bytes_per_item"):  # the arrays' nbytes over the capacity (allocated whole, filled or not)
        out["bytes_per_item"] = c.bytes_per_item()
    if case == "atari_frames" and hasattr(c, "stored_next_obs") and n_push <= CAP:
        # the push1 items (one env, slots 0..n_push-1): is each episode's last next_obs stored as pushed?
        ends = [k for k in range(n_push) if cols["done"][k]]
        out["terminal_next_obs_exact"] = sum(
            bool((c.stored_next_obs(k) == cols["next_obs"][k]).all()) for k in ends) / max(len(ends), 1)
    calls = (300 if quick else 1500) if case == "float4" else (40 if quick else 200)
    ops: Dict[str, Tuple[Callable[[], Any], int]] = {}
    for n in (64, 256):
        ops[f"sample{n}"] = ((lambda n=n: c.sample(n)), calls if n == 64 else calls // 3)
        if hasattr(c, "sample_batch"):
            ops[f"sample_batch{n}"] = ((lambda n=n: c.sample_batch(n)), calls if n == 64 else calls // 3)
    if hasattr(c, "sample_distinct"):
        ops["sample_distinct64"] = ((lambda: c.sample_distinct(64)), calls)
    if hasattr(c, "per64"):
        try:
            c.fill_per(cols, 2 * n_push)
            ops["per64"] = (c.per64, calls)
            if hasattr(c, "per64_list"):
                ops["per64_list"] = (c.per64_list, calls)
        except Exception as e:  # e.g. TorchRL's C++ segment tree missing for this torch build
            out["per64_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    return out, ops


def run_one(name: str, case: str, reps: int, quick: bool) -> Dict[str, Any]:
    """Everything for one contestant in this process, one operation after the other."""
    out, ops = setup(name, case, reps, quick)
    for op, (fn, calls) in ops.items():
        out[op] = timed(fn, calls, reps)
    return out


def serve(name: str, case: str, reps: int, quick: bool) -> None:
    """Worker of the interleaved mode: set up, print the push results and the operations, then
    answer each ``op calls`` line on stdin with the process-CPU seconds of that many calls (after a
    fifth as many untimed ones: the other workers ran in between)."""
    out, ops = setup(name, case, reps, quick)
    for fn, _ in ops.values():
        fn()  # warm
    # (marked lines: a library may print to stdout too)
    print("READY " + json.dumps({"out": out, "ops": {op: calls for op, (_, calls) in ops.items()}}), flush=True)
    for line in sys.stdin:
        op, calls = line.split()
        fn = ops[op][0]
        for _ in range(max(int(calls) // 5, 1)):  # untimed: caches and branch predictors warm after the switch
            fn()
        t0 = time.process_time()
        for _ in range(int(calls)):
            fn()
        print(f"TIME {time.process_time() - t0!r}", flush=True)


def _reply(p: subprocess.Popen, mark: str) -> str:
    """The rest of the next stdout line of worker ``p`` that starts with ``mark`` ('' if it ended)."""
    for line in p.stdout:
        if line.startswith(mark):
            return line[len(mark):]
    return ""


def interleaved_round(names: List[str], case: str, reps: int, quick: bool,
                      say: Callable[[str], None]) -> Dict[str, Dict[str, Any]]:
    """One round: every contestant set up in its own process (one after the other), then each
    sampling operation timed in ``reps`` blocks that take turns across the contestants (A B C A B C
    ...), so a neighbour's burst of load lands on everyone alike; per contestant and operation, the
    median block."""
    procs: Dict[str, subprocess.Popen] = {}
    ready: Dict[str, Dict[str, Any]] = {}
    out: Dict[str, Dict[str, Any]] = {}
    errs = tempfile.TemporaryFile("w+")  # workers' stderr (a pipe nobody reads could fill up and block them)
    try:
        for name in names:
            p = subprocess.Popen([sys.executable, __file__, "--serve", name, "--case", case, "--reps", str(reps),
                                  "--capacity", str(CAP)]
                                 + (["--quick"] if quick else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=errs, text=True)
            line = _reply(p, "READY ")
            if not line:
                p.wait()
                errs.seek(0)
                err = (errs.read().strip().splitlines() or ["?"])[-1]
                out[name] = {"error": err}
                say(f"# {case} {name}: SKIPPED ({err})")
                continue
            procs[name] = p
            ready[name] = json.loads(line)
            out[name] = dict(ready[name]["out"])
        all_ops = list(dict.fromkeys(op for r in ready.values() for op in r["ops"]))
        rates: Dict[str, Dict[str, List[float]]] = {n: {} for n in procs}
        for _ in range(3 * reps):  # three times as many blocks as --one mode, a third as long
            for op in all_ops:
                for name, p in procs.items():
                    calls = ready[name]["ops"].get(op)
                    if calls is None:
                        continue
                    calls = max(calls // 3, 1)
                    p.stdin.write(f"{op} {calls}\n")
                    p.stdin.flush()
                    dt = float(_reply(p, "TIME "))
                    rates[name].setdefault(op, []).append(calls / max(dt, 1e-9))
        for name, by_op in rates.items():
            for op, v in by_op.items():
                out[name][op] = statistics.median(v)
    finally:
        for p in procs.values():
            if p.stdin:
                p.stdin.close()
            p.wait()
        errs.close()
    return out


# ================================================================================ driver
def fmt(v: Any) -> str:
    return f"{v / 1000:8.1f}k" if isinstance(v, (int, float)) else f"{'-':>9}"


def main() -> None:
    global CAP
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--case", default="float4", help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="+", default=CONTESTANTS, choices=CONTESTANTS,
                    help="contestants (each case runs those of them that apply to it)")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--reps", type=int, default=5, help="timed blocks per operation and process (median)")
    ap.add_argument("--rounds", type=int, default=3, help="processes per contestant, interleaved (median)")
    ap.add_argument("--quick", action="store_true", help="fewer items and calls (smoke run)")
    ap.add_argument("--capacity", type=int, default=CAP,
                    help="buffer capacity (default 100k; below the ~4k pushed items the rings wrap: steady-state pushes)")
    ap.add_argument("--sequential", action="store_true",
                    help="the old mode: each contestant measures all its operations alone, one process after "
                         "the other (default: the sampling operations take turns across the contestants)")
    args = ap.parse_args()
    CAP = contestants.CAP = args.capacity  # the adapters size their buffers by it
    if args.one:
        print(json.dumps(run_one(args.one, args.case, args.reps, args.quick)))
        return
    if args.serve:
        serve(args.serve, args.case, args.reps, args.quick)
        return
    lines: List[str] = []

    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    say(f"# replay buffer benchmark  {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}  {platform.processor() or platform.machine()}")
    say(f"# uptime at start: {up}")
    say("# allocator: " + " ".join(f"{k}={os.environ.get(k, '(unset)')}" for k in
                                   ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")))
    say("# ops/s = calls per process-CPU second (median of blocks); push8/sample/per: batches per second")
    if args.sequential:
        say(f"# {args.rounds} rounds; each round runs every contestant once, in turn, in a fresh process; "
            "reported: median over rounds")
    else:
        say(f"# {args.rounds} rounds; each round sets every contestant up in a fresh process (pushes timed "
            f"there, one after the other), then times the sampling operations in {3 * args.reps} short blocks "
            "that take turns across the contestants (median block); reported: median over rounds")
    results: Dict[str, Dict[str, Any]] = {}
    raw: Dict[str, Dict[str, List[Dict[str, Any]]]] = {}
    for case in args.cases:
        only = [n for n in args.only if n in CASE_CONTESTANTS[case]]
        results[case], raw[case] = {}, {n: [] for n in only}
        for rnd in range(args.rounds):
            names = [n for n in only if not (raw[case][n] and "error" in raw[case][n][0])]
            if args.sequential:
                got = {}
                for name in names:
                    proc = subprocess.run([sys.executable, __file__, "--one", name, "--case", case, "--reps",
                                           str(args.reps), "--capacity", str(CAP)] + (["--quick"] if args.quick else []),
                                          capture_output=True, text=True)
                    if proc.returncode != 0:
                        got[name] = {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
                        say(f"# {case} {name}: SKIPPED ({got[name]['error']})")
                    else:
                        got[name] = json.loads(proc.stdout.strip().splitlines()[-1])
            else:
                got = interleaved_round(names, case, args.reps, args.quick, say)
            for name, r in got.items():
                raw[case][name].append(r)
        for name, runs in raw[case].items():
            if not runs or "error" in runs[0]:
                results[case][name] = runs[0] if runs else {"error": "not run"}
                continue
            merged: Dict[str, Any] = {"name": runs[0]["name"]}
            for key in runs[0]:
                vals = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
                merged[key] = statistics.median(vals) if vals else runs[0][key]
            results[case][name] = merged
        cols = ["push1", "push8", "sample64", "sample_batch64", "sample256", "sample_batch256", "per64", "per64_list",
                "sample_distinct64"] + (["bytes_per_item"] if case == "atari_frames" else [])
        say()
        say(f"## case {case}: obs {CASES[case][1].__name__}{list(CASES[case][0])}, capacity {CAP}")
        say(f"{'contestant':<46}" + "".join(f"{c:>{max(10, len(c) + 1)}}" for c in cols))
        for name, r in results[case].items():
            if "error" in r:
                continue
            say(f"{r['name'][:46]:<46}" + "".join(f"{fmt(r.get(c)):>{max(10, len(c) + 1)}}" for c in cols))
        say("  (Stride: sample = list of dicts, sample_batch = columns; per64_list = list-of-dicts sample + update)")
        for name, res in results[case].items():
            if "per64_error" in res:
                say(f"  {name} per64 not measured: {res['per64_error']}")
        r = results[case]
        say("  ratios (target):")

        def ratio(a: Any, b: Any) -> str:
            return f"{a / b:6.2f}x" if isinstance(a, (int, float)) and isinstance(b, (int, float)) else "   n/a"

        def line(label: str, value: str, note: str) -> None:
            say(f"    {label:<66}{value}  {note}")

        bare = r.get("bare", {}).get("sample64")
        bare_distinct = r.get("bare", {}).get("sample_distinct64")
        for s in ("stride_naive", "stride_advanced", "stride_naive_replace", "stride_advanced_replace"):
            if s in r and "error" not in r[s]:
                line(f"{s} sample_batch64 / bare ring sample64", ratio(r[s].get('sample_batch64'), bare), "(>= 0.8)")
        for s in ("stride_naive", "stride_advanced"):
            if s in r and "error" not in r[s]:
                line(f"{s} sample_batch64 / bare ring sample_distinct64", ratio(r[s].get('sample_batch64'), bare_distinct),
                     "(info: both distinct)")
        for s in ("stride_naive", "stride_advanced"):
            rs = r.get(s + "_replace", {})
            if s in r and "error" not in r[s] and rs and "error" not in rs:
                for op in ("sample64", "sample_batch64", "sample256", "per64", "per64_list"):
                    if op in r[s] and op in rs:
                        line(f"{s} {op}: replace=False / replace=True", ratio(r[s][op], rs[op]), "(info)")
        ts_per = r.get("tianshou", {}).get("per64")
        adv = r.get("stride_advanced", {})
        line("stride_advanced per64 / tianshou per64", ratio(adv.get('per64'), ts_per), "(>= 2)")
        if "stride_advanced_replace" in r:
            line("stride_advanced_replace per64 / tianshou per64", ratio(r['stride_advanced_replace'].get('per64'), ts_per),
                 "(info)")
        line("stride_advanced per64_list / tianshou per64", ratio(adv.get('per64_list'), ts_per), "(info)")
        if "torchrl" in r and "per64" in r["torchrl"]:
            line("stride_advanced per64 / torchrl per64", ratio(adv.get('per64'), r['torchrl']['per64']), "(info)")
        if case == "atari_frames":
            say("  (bytes_per_item: k = 1000 bytes per transition slot, the arrays' nbytes over the capacity)")
            fr, pl = r.get("stride_naive_frames", {}), r.get("stride_naive", {})
            sb3, sb3o = r.get("sb3", {}), r.get("sb3_optimize", {})
            line("stride_naive bytes_per_item / stride_naive_frames bytes_per_item",
                 ratio(pl.get("bytes_per_item"), fr.get("bytes_per_item")), "(memory saved)")
            line("sb3_optimize bytes_per_item / stride_naive_frames bytes_per_item",
                 ratio(sb3o.get("bytes_per_item"), fr.get("bytes_per_item")), "(info)")
            for op in ("push1", "push8", "sample64", "sample_batch64", "sample256", "sample_batch256"):
                line(f"stride_naive_frames {op} / stride_naive {op}", ratio(fr.get(op), pl.get(op)), "(info)")
            tsf = r.get("tianshou_frames", {})
            line("tianshou_frames bytes_per_item / stride_naive_frames bytes_per_item",
                 ratio(tsf.get("bytes_per_item"), fr.get("bytes_per_item")), "(info)")
            for peer, pr in (("sb3", sb3), ("sb3_optimize", sb3o), ("tianshou_frames", tsf)):
                for op in ("sample64", "sample256"):
                    line(f"stride_naive_frames sample_batch{op[6:]} / {peer} {op}",
                         ratio(fr.get(f"sample_batch{op[6:]}"), pr.get(op)), "(info)")
                line(f"stride_naive_frames push1 / {peer} push1", ratio(fr.get("push1"), pr.get("push1")), "(info)")
            for name, res in r.items():
                if "terminal_next_obs_exact" in res:
                    say(f"    {name}: stored terminal next_obs equal to the pushed one in "
                        f"{res['terminal_next_obs_exact']:.0%} of the push1 stream's episode ends")
            af = r.get("stride_advanced_frames", {})
            line("stride_advanced_frames per64 / tianshou_frames per64", ratio(af.get("per64"), tsf.get("per64")),
                 "(info: prioritized, frames once)")
        peers = {p: r[p]["sample64"] for p in ("tianshou", "torchrl", "sb3") if p in r and "sample64" in r[p]}
        if peers:
            best = max(peers, key=peers.get)
            for s in ("stride_naive", "stride_advanced"):
                if s in r and "sample64" in r[s]:
                    line(f"{s} sample64 (list of dicts) / best peer sample64 ({best})", ratio(r[s]['sample64'], peers[best]),
                         "(> 1)")
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    say()
    say(f"# uptime at end: {up}")
    say("# the machine is shared with other jobs: absolute numbers move with the load; compare ratios from one run")
    os.makedirs("benchmarks/results", exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())
    with open(f"benchmarks/results/buffers_{stamp}.txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(f"benchmarks/results/buffers_{stamp}.json", "w") as f:
        json.dump({"median": results, "rounds": raw}, f, indent=1)


if __name__ == "__main__":
    main()
