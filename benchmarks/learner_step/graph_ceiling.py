"""The ceiling of a Pong DQN learner step on a GPU: the same update eager and captured in a CUDA graph.

    python benchmarks/learner_step/graph_ceiling.py [--steps 3000]     # needs a CUDA device

Issue 29 asks the parallel Pong DQN run for >= 2,500 env steps/s at one gradient step per 4 env
steps: >= 625 updates/s. ``step_profile.py --cuda`` measures the learner's step as the pipelines
make it (``BaseLearner.train`` on the policy's learn mode); this script measures what the GPU allows
under it, outside the framework, on the same work: Stride's DQN model (the Nature CNN of
``stride.model``), batch 32 of ``(4, 84, 84)`` uint8 frames copied from pinned host memory each
step, one online pass over obs and next_obs together, a target pass, ``q_nstep_td_error`` (Huber),
backward, gradient norm clipped at 10, Adam. Printed, each over ``--steps`` steps with one
synchronisation at the end:

* **eager**: the update as plain PyTorch calls: the host's cost of launching its kernels one by one;
* **graphed**: the update captured once (``torch.cuda.graph``: forward, backward, clipping and a
  capturable Adam in one graph) and replayed after each batch copy: one launch per step;
* the GPU time of one replay (CUDA events): the floor under both.

What the gap between the two says: how much of a step is host overhead a graph would remove. It
is a measurement, not Stride's learner: a graphed learner would also need static batch buffers,
the schedules' learning rate as a device tensor, and the target copy outside the graph.
"""

from __future__ import annotations

import argparse
import copy
import time
from typing import Callable, Dict, List

import torch

BATCH, FRAMES, ACTIONS = 32, (4, 84, 84), 6


def build(device: torch.device) -> Dict[str, object]:
    """Model, target, capturable Adam, static device batch and a few pinned host batches."""
    from stride.model import DQN
    from stride.rl_utils import q_nstep_td_error

    model = DQN(obs_shape=list(FRAMES), action_shape=ACTIONS).to(device)
    target = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, capturable=True, foreach=True)
    gen = torch.Generator().manual_seed(0)

    def host_batch() -> Dict[str, torch.Tensor]:
        return {"obs": torch.randint(0, 256, (BATCH, *FRAMES), dtype=torch.uint8, generator=gen).pin_memory(),
                "next_obs": torch.randint(0, 256, (BATCH, *FRAMES), dtype=torch.uint8, generator=gen).pin_memory(),
                "action": torch.randint(0, ACTIONS, (BATCH,), generator=gen).pin_memory(),
                "reward": torch.randint(-1, 2, (BATCH,), generator=gen).float().pin_memory(),
                "done": (torch.rand(BATCH, generator=gen) < 0.01).pin_memory()}

    hosts = [host_batch() for _ in range(8)]
    static = {k: v.to(device) for k, v in hosts[0].items()}
    params = list(model.parameters())

    def update() -> torch.Tensor:
        obs, next_obs = static["obs"], static["next_obs"]
        logit = model(torch.cat([obs, next_obs]))["logit"]
        q, next_online = logit[:BATCH], logit[BATCH:].detach()
        with torch.no_grad():
            next_target = target(next_obs)["logit"]
        loss, _ = q_nstep_td_error(q, next_target, static["action"], next_online.argmax(-1), static["reward"],
                                   static["done"], 0.99, None, "huber", need_td_abs=False)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 10.0, foreach=True)
        opt.step()
        return loss.detach()

    return {"update": update, "static": static, "hosts": hosts}


def timed(run: Callable[[], object], static: Dict[str, torch.Tensor], hosts: List[Dict[str, torch.Tensor]],
          steps: int) -> float:
    """Updates/s over ``steps`` steps, each after a non-blocking copy of a host batch into ``static``."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(steps):
        for k, v in hosts[i % len(hosts)].items():
            static[k].copy_(v, non_blocking=True)
        run()
    torch.cuda.synchronize()
    return steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=3000)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("graph_ceiling.py needs a CUDA device (torch.cuda.is_available() is False)")
    device = torch.device("cuda")
    torch.set_num_threads(1)
    parts = build(device)
    update, static, hosts = parts["update"], parts["static"], parts["hosts"]
    assert callable(update) and isinstance(static, dict) and isinstance(hosts, list)
    side = torch.cuda.Stream()  # warm-up on a side stream, as torch.cuda.graph's docs ask before a capture
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(5):
            update()
    torch.cuda.current_stream().wait_stream(side)
    eager = timed(update, static, hosts, args.steps)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        update()
    graphed = timed(graph.replay, static, hosts, args.steps)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(200):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    gpu_ms = start.elapsed_time(end) / 200
    print(f"Pong DQN update, batch {BATCH} of {FRAMES} uint8, {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print(f"eager:   {eager:8.1f} updates/s ({1000 / eager:.3f} ms per step, batch copy included)")
    print(f"graphed: {graphed:8.1f} updates/s ({1000 / graphed:.3f} ms per step, batch copy included)")
    print(f"GPU time of one replay: {gpu_ms:.3f} ms ({1000 / gpu_ms:.0f} updates/s if the GPU never waited)")


if __name__ == "__main__":
    main()
