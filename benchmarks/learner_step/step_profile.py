"""One learner step of Pong DQN, timed and taken apart: updates/s and where a step's time goes.

    .venv/bin/python benchmarks/learner_step/step_profile.py [--fill 100000] [--steps 60] [--per] [--cuda]

The zoo's Pong DQN (``stride.zoo.atari.config.pong_dqn_config``: Nature CNN on ``(4, 84, 84)`` uint8
stacked frames, batch 32, Huber loss, gradient norm 10) learns from a replay buffer holding ``--fill``
transitions of stacked frames (``frame_stack=4``, as the config stores them), pushed by 8 interleaved
synthetic env streams of random frames (no ALE needed). ``--per``: the prioritized advanced buffer
(``policy.priority``), whose step sends the TD errors back. ``--cuda``: the learner on the GPU.

A step is what the serial and parallel learners do: ``buffer.sample_batch`` -> ``BaseLearner.train``
(its log hook as configured: ``.item()`` only every ``log_show_after_iter`` steps) -> ``buffer.update``
(PER). Printed:

* updates/s over ``--steps`` steps (CUDA synchronised at the end only: the rate the GPU sustains), and
  the process CPU time per step (on a shared CPU box the steadier figure: other processes' load
  stretches the wall clock, not this process's CPU seconds);
* the outer sections per step by ``time.perf_counter`` (sample / train / priority update; on CUDA
  ``train`` is the host's share unless a step synchronises);
* ``train`` taken apart by ``torch.profiler`` over ``--profile-steps`` steps, by the order of its
  operators (the DQN step is sequential): collate (Python and ``from_numpy`` before the first
  transfer or model operator), to-device (``to`` / ``copy_`` / ``pin_memory`` operators before the
  model's first operator), forward (to the first autograd-engine operator), backward (autograd
  engine), optimiser (the rest: gradient clip, Adam, target copy, logged scalars); with CUDA, also
  each part's device (kernel) time;
* the machine load (``/proc/loadavg``) before and after, torch's thread count and the device.

Run it on two checkouts (``PYTHONPATH=<checkout>``) to compare them: it uses public APIs only.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Dict, List, Mapping, Tuple

import numpy as np
import torch

ENVS = 8  # interleaved env streams filling the buffer (the zoo config's collector_env_num)
EPISODE = (400, 1200)  # episode lengths drawn for the synthetic streams (each start: 4 + 1 new frames)
SECTIONS = ("collate", "to-device", "forward", "backward", "optimiser")
MOVE_OPS = ("aten::to", "aten::_to_copy", "aten::copy_", "aten::pin_memory", "aten::_pin_memory")
BATCH_OPS = MOVE_OPS + ("aten::lift_fresh", "aten::from_numpy", "aten::detach", "aten::alias", "aten::empty",
                        "aten::empty_strided", "aten::set_", "aten::as_strided")


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def build(args: argparse.Namespace) -> Tuple[Any, Any, Any]:
    """(policy, learner, buffer) of the zoo's Pong DQN, with the options asked for."""
    from stride.config import compile_config
    from stride.data import create_buffer
    from stride.utils.registry import POLICY_REGISTRY
    from stride.worker.learner import BaseLearner
    from stride.zoo.atari.config import pong_dqn_config as mod

    main: Dict[str, Any] = {**mod.main_config, "policy": {**mod.main_config["policy"]}}
    create: Dict[str, Any] = {**mod.create_config}
    policy_cfg = main["policy"]
    policy_cfg["cuda"] = bool(args.cuda)
    rb = {**policy_cfg["other"]["replay_buffer"], "replay_buffer_size": args.fill}
    if args.per:
        policy_cfg["priority"], policy_cfg["priority_IS_weight"] = True, True
        create["replay_buffer"] = dict(type="advanced")
    policy_cfg["other"] = {**policy_cfg["other"], "replay_buffer": rb}
    cfg = compile_config(main, create, save_cfg=False)
    policy = POLICY_REGISTRY.get("dqn")(cfg.policy, enable_field=["learn"])
    learner = BaseLearner(cfg.policy.learn.learner, policy.learn_mode)
    buffer = create_buffer(cfg.policy.other.replay_buffer, seed=0)
    return policy, learner, buffer


def fill(buffer: Any, n: int, seed: int = 0) -> float:
    """Push ``n`` transitions of 8 interleaved streams (32 per push, as the zoo's collects); seconds taken."""
    rng = np.random.default_rng(seed)

    def frame() -> np.ndarray:
        return np.frombuffer(rng.bytes(84 * 84), dtype=np.uint8).reshape(84, 84)

    def reset() -> Tuple[np.ndarray, int]:
        return np.stack([frame()] * 4), int(rng.integers(*EPISODE))

    streams = [reset() for _ in range(ENVS)]
    t0 = time.perf_counter()
    pushed, items = 0, []
    while pushed < n:
        for e in range(ENVS):
            obs, left = streams[e]
            next_obs = np.concatenate([obs[1:], frame()[None]])
            done = left <= 1
            items.append({"obs": obs, "action": int(rng.integers(6)), "reward": float(rng.integers(-1, 2)),
                          "next_obs": next_obs, "done": done})
            streams[e] = reset() if done else (next_obs, left - 1)
        if len(items) >= 32:
            buffer.push(items[: n - pushed])
            pushed += min(len(items), n - pushed)
            items = []
    return time.perf_counter() - t0


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def step(buffer: Any, learner: Any, per: bool, it: int, times: Dict[str, float]) -> None:
    """One learner step: sample, train, priorities back; adds each part's seconds to ``times``."""
    t0 = time.perf_counter()
    batch, ticket = buffer.sample_batch(32, it)
    t1 = time.perf_counter()
    learner.train(batch, it * 4)
    t2 = time.perf_counter()
    if per:
        buffer.update(ticket, learner.priority)
    t3 = time.perf_counter()
    times["sample"] += t1 - t0
    times["train"] += t2 - t1
    times["priority update"] += t3 - t2


def _device_us(e: Any) -> float:
    return float(getattr(e, "self_device_time_total", 0.0) or 0.0)


def split_train(events: List[Any], start_us: float, end_us: float) -> Tuple[Dict[str, float], Dict[str, float]]:
    """The host (wall) and device microseconds of one ``train`` window, by section (module docstring)."""
    host = dict.fromkeys(SECTIONS, 0.0)
    device = dict.fromkeys(SECTIONS, 0.0)
    inside = sorted((e for e in events if start_us <= e.time_range.start and e.time_range.end <= end_us),
                    key=lambda e: e.time_range.start)
    top = [e for e in inside if e.name != "train" and (e.cpu_parent is None or e.cpu_parent.name == "train")]
    first_model = next((e.time_range.start for e in top if e.name not in BATCH_OPS), end_us)
    backward = [e for e in top if e.name.startswith("autograd::engine::evaluate_function")]
    first_bwd = backward[0].time_range.start if backward else end_us
    last_bwd = max((e.time_range.end for e in backward), default=first_bwd)
    first_move = next((e.time_range.start for e in top if e.name in MOVE_OPS and e.time_range.start < first_model),
                      first_model)
    host["collate"] = first_move - start_us
    host["to-device"] = first_model - first_move
    host["forward"] = first_bwd - first_model
    host["backward"] = last_bwd - first_bwd
    host["optimiser"] = end_us - last_bwd
    for e in inside:  # device time: by where its host operator started
        t = e.time_range.start
        sec = ("collate" if t < first_move else "to-device" if t < first_model else "forward" if t < first_bwd
               else "backward" if t <= last_bwd else "optimiser")
        device[sec] += _device_us(e)
    return host, device


def profile_train(buffer: Any, learner: Any, per: bool, steps: int, it0: int,
                  device: torch.device) -> Tuple[Dict[str, float], Dict[str, float]]:
    """Mean host / device milliseconds per ``train`` section over ``steps`` profiled steps."""
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        for i in range(steps):
            batch, ticket = buffer.sample_batch(32, it0 + i)
            with record_function("train"):
                learner.train(batch, (it0 + i) * 4)
            if per:
                buffer.update(ticket, learner.priority)
        sync(device)
    events = list(prof.events())
    host = dict.fromkeys(SECTIONS, 0.0)
    dev = dict.fromkeys(SECTIONS, 0.0)
    windows = [e for e in events if e.name == "train"]
    for w in windows:
        h, d = split_train(events, w.time_range.start, w.time_range.end)
        for k in SECTIONS:
            host[k] += h[k] / 1e3 / len(windows)
            dev[k] += d[k] / 1e3 / len(windows)
    return host, dev


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fill", type=int, default=100000, help="transitions in the replay buffer")
    p.add_argument("--steps", type=int, default=60, help="timed learner steps")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--profile-steps", type=int, default=5)
    p.add_argument("--per", action="store_true", help="prioritized replay (advanced buffer, priorities sent back)")
    p.add_argument("--cuda", action="store_true", help="the learner on CUDA (refused where torch sees none)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = p.parse_args()
    if args.cuda and not torch.cuda.is_available():
        raise SystemExit("--cuda: torch.cuda.is_available() is False on this machine")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    load0 = loadavg()
    policy, learner, buffer = build(args)
    device = next(policy.model.parameters()).device
    fill_s = fill(buffer, args.fill)
    it = 0
    times = dict.fromkeys(("sample", "train", "priority update"), 0.0)
    for _ in range(args.warmup):
        step(buffer, learner, args.per, it, times)
        it += 1
    sync(device)
    times = dict.fromkeys(times, 0.0)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(args.steps):
        step(buffer, learner, args.per, it, times)
        it += 1
    sync(device)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    host, dev = profile_train(buffer, learner, args.per, args.profile_steps, it, device)
    load1 = loadavg()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"Pong DQN learner step: batch 32 of (4, 84, 84) uint8, replay {len(buffer)} transitions "
          f"({'prioritized' if args.per else 'uniform'}), device {name}, torch threads {torch.get_num_threads()}, "
          f"cores {os.cpu_count()}")
    print(f"load (1/5/15 min) before {load0}, after {load1}; buffer filled in {fill_s:.1f} s")
    print(f"updates/s: {args.steps / wall:.2f} ({args.steps} steps, {wall / args.steps * 1e3:.2f} ms/step wall, "
          f"{cpu / args.steps * 1e3:.2f} ms/step process CPU: {args.steps / cpu:.2f} updates per CPU-second, "
          "the figure a loaded machine disturbs least)")
    per_step = {k: v / args.steps * 1e3 for k, v in times.items()}
    total = sum(per_step.values())
    print("per step (perf_counter):  " + "  ".join(f"{k} {v:.3f} ms ({v / total:.1%})" for k, v in per_step.items()))
    htot = sum(host.values())
    print(f"train by torch.profiler ({args.profile_steps} steps, host ms; profiler overhead included):")
    for k in SECTIONS:
        line = f"  {k:10s} {host[k]:8.3f} ms  {host[k] / htot if htot else 0:6.1%}"
        if device.type == "cuda":
            line += f"   device {dev[k]:8.3f} ms"
        print(line)


if __name__ == "__main__":
    main()
