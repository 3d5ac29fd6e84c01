"""Time of one gradient all-reduce between 2 learner replicas (gloo, this machine), for the zoo's
CartPole DQN model and MinAtar Breakout DQN conv model (issue 16).

Three ways, each timed in the same 2 processes, interleaved in rounds:

- ``stride``: ``stride.torch_utils.dist.allreduce_gradients`` -- the gradients and one indicator per
  parameter in one flat bucket, one collective (copy in, all-reduce, divide, views out);
- ``per_param``: DI-engine's scheme as its docs and source describe it (``allreduce_with_indicator``,
  ``ding/utils/pytorch_ddp_dist_helper.py``), written here from that description: for every
  parameter one all-reduce of its gradient and one of its indicator, then a division;
- ``flat_only``: one all-reduce of a preallocated buffer of the same size (the floor: the
  collective alone, no copies).

Wall time per call (a communication op: the CPU time of a blocking all-reduce is mostly spinning),
with a barrier before each call so both ranks start together; median and p90 over all calls.

    python benchmarks/allreduce/bench.py [--calls 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from typing import Callable, Dict, List

import torch
import torch.distributed as dist
from torch import nn

from stride.model import DQN
from stride.torch_utils import dist as sdist

MODELS = {
    "cartpole_dqn": dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[128, 128], dueling=False, head_layer_num=0),
    "minatar_breakout_dqn": dict(obs_shape=[4, 10, 10], action_shape=3, encoder="minatar", dueling=False, head_layer_num=0),
}


def per_param(params: List[nn.Parameter]) -> None:
    """DI-engine's indicator scheme: two collectives per parameter."""
    for p in params:
        indicator = torch.ones(1) if p.grad is not None else torch.zeros(1)
        grad = p.grad if p.grad is not None else torch.zeros_like(p)
        dist.all_reduce(grad)
        dist.all_reduce(indicator)
        grad.div_(indicator.clamp(min=1.0))
        p.grad = grad


def _replica(rank: int, port: int, calls: int, rounds: int, out: str) -> None:
    torch.set_num_threads(1)
    sdist.dist_init(rank=rank, world_size=2, port=port, backend="gloo")
    try:
        report: Dict[str, Dict[str, object]] = {}
        for name, kwargs in MODELS.items():
            torch.manual_seed(0)
            params = list(DQN(**kwargs).parameters())
            numel = sum(p.numel() for p in params)
            flat = torch.randn(numel)

            def fresh() -> None:
                for p in params:
                    p.grad = torch.randn_like(p)

            ways: Dict[str, Callable[[], None]] = {
                "stride": lambda: sdist.allreduce_gradients(params),
                "per_param": lambda: per_param(params),
                "flat_only": lambda: dist.all_reduce(flat),
            }
            times: Dict[str, List[float]] = {w: [] for w in ways}
            for _ in range(rounds):
                for way, fn in ways.items():
                    for i in range(calls + 10):
                        fresh()
                        dist.barrier()
                        t0 = time.perf_counter()
                        fn()
                        dt = time.perf_counter() - t0
                        if i >= 10:  # warm-up calls dropped
                            times[way].append(dt)
            report[name] = {"params": len(params), "numel": numel, "bytes": numel * 4,
                            **{w: {"median_us": statistics.median(t) * 1e6,
                                   "p90_us": statistics.quantiles(t, n=10)[-1] * 1e6, "n": len(t)}
                               for w, t in times.items()}}
        if rank == 0:
            with open(out, "w") as f:
                json.dump(report, f, indent=1)
    finally:
        sdist.dist_finalize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    up0 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    out = os.path.join(tempfile.mkdtemp(), "allreduce.json")
    torch.multiprocessing.spawn(_replica, args=(sdist.free_port(), args.calls, args.rounds, out), nprocs=2, join=True)
    up1 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    with open(out) as f:
        report = json.load(f)
    print(f"uptime at start: {up0}\nuptime at end:   {up1}")
    print(f"{'model':<22}{'params':>7}{'floats':>9}  " + "  ".join(f"{w + ' med/p90 us':>22}" for w in ("stride", "per_param", "flat_only")))
    for name, r in report.items():
        cells = "  ".join(f"{r[w]['median_us']:>11.0f} /{r[w]['p90_us']:>8.0f}" for w in ("stride", "per_param", "flat_only"))
        print(f"{name:<22}{r['params']:>7}{r['numel']:>9}  {cells}")
    os.makedirs("benchmarks/results", exist_ok=True)
    with open("benchmarks/results/allreduce.json", "w") as f:
        json.dump({"uptime_start": up0, "uptime_end": up1, **report}, f, indent=1)


if __name__ == "__main__":
    main()
