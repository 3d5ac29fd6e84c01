"""Sequence sampling for recurrent replay (issue 18): R2D2's case, sequences of 80 steps with a
40-step burn-in overlap (a new sequence every 40 steps), batches of 32, a recurrent state of 64
floats stored with each sequence start.

    PYTHONPATH=. benchmarks/.venv-buffers/bin/python benchmarks/buffers/sequences.py [--rounds 5] [--calls 200]

The same 100k transitions (500 episodes of 200 steps, obs float32[4]) go into:

* Stride: ``SequenceAdder(length=80, period=40)`` with the state as ``extras`` (what ``R2D2Policy``
  stores: whole sequences, each step in two of them), in ``AdvancedReplayBuffer``; a batch is
  ``sample_batch(32)`` (columns ``(32, 80, ...)``); prioritized: ``priority=True`` + ``update``.
* TorchRL: transitions (state per step) in ``LazyTensorStorage``, ``SliceSampler(slice_len=80,
  traj_key='episode')``, 32 slices per batch; prioritized: ``PrioritizedSliceSampler`` +
  ``update_priority`` of the slices' steps.
* Tianshou: transitions in ``ReplayBuffer(stack_num=80)`` (its recurrent-training mechanism:
  observations stacked back in time within an episode); a batch is ``sample(32)`` plus the same
  stacking for action, reward, done and state (``buffer.get(idx, key, stack_num=80)``); prioritized:
  ``PrioritizedReplayBuffer`` + ``update_weight``.

Numbers: sequences per process-CPU second (``time.process_time``), the contestants taking turns
in blocks of ``--calls`` calls (A B C A B C ...), the median block over ``--rounds``; ``uptime``
is printed at start and end (the box is shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable, Dict, List

import numpy as np
import torch

EPISODES, EP_LEN, LENGTH, PERIOD, BATCH, STATE = 500, 200, 80, 40, 32, 64


def episodes(seed: int = 0) -> List[Dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"obs": rng.standard_normal((EP_LEN + 1, 4)).astype(np.float32),
             "action": rng.integers(0, 2, EP_LEN), "reward": rng.standard_normal(EP_LEN).astype(np.float32),
             "state": rng.standard_normal((EP_LEN, STATE)).astype(np.float32)} for _ in range(EPISODES)]


class Stride:
    name = "Stride SequenceAdder + AdvancedReplayBuffer"

    def __init__(self, eps: List[Dict[str, np.ndarray]]) -> None:
        from stride.data import AdvancedReplayBuffer, SequenceAdder

        items: List[Dict[str, Any]] = []
        adder = SequenceAdder(items.append, LENGTH, PERIOD)
        for ep in eps:
            adder.add(ep["obs"][0])
            for t in range(EP_LEN):
                last = t == EP_LEN - 1
                adder.add(ep["obs"][t + 1], ep["reward"][t], last, {"terminated": last}, action=ep["action"][t],
                          extras={"prev_state": ep["state"][t]})
        items = [dict(it, prev_state=it["prev_state"][0]) for it in items]  # the state at the sequence start
        self.n = len(items)
        self.b = AdvancedReplayBuffer({"replay_buffer_size": self.n, "priority": False}, seed=0)
        self.per = AdvancedReplayBuffer({"replay_buffer_size": self.n, "priority": True}, seed=0)
        self.b.push(items)
        self.per.push(items)
        self.rng = np.random.default_rng(1)
        print(f"Stride: {self.n} sequences, {self.b.storage.nbytes / (EPISODES * EP_LEN):.0f} bytes per env step stored "
              f"(each step in {LENGTH // PERIOD} sequences; one transition's obs+action+reward+done+state: "
              f"{4 * 4 + 8 + 4 + 1 + 4 * STATE} bytes)")

    def seq(self) -> Any:
        return self.b.sample_batch(BATCH)

    def per_seq(self) -> None:
        _, ticket = self.per.sample_batch(BATCH)
        self.per.update(ticket, self.rng.random(BATCH) + 0.01)


class TorchRL:
    name = "TorchRL SliceSampler / PrioritizedSliceSampler"

    def __init__(self, eps: List[Dict[str, np.ndarray]]) -> None:
        from tensordict import TensorDict
        from torchrl.data import LazyTensorStorage, PrioritizedSliceSampler, ReplayBuffer, SliceSampler

        n = EPISODES * EP_LEN
        cols = {"obs": np.concatenate([e["obs"][:-1] for e in eps]), "next_obs": np.concatenate([e["obs"][1:] for e in eps]),
                "action": np.concatenate([e["action"] for e in eps]), "reward": np.concatenate([e["reward"] for e in eps]),
                "done": np.concatenate([np.arange(EP_LEN) == EP_LEN - 1 for _ in eps]),
                "state": np.concatenate([e["state"] for e in eps]), "episode": np.repeat(np.arange(EPISODES), EP_LEN)}
        td = TensorDict({k: torch.from_numpy(v) for k, v in cols.items()}, batch_size=[n])
        self.b = ReplayBuffer(storage=LazyTensorStorage(n), sampler=SliceSampler(slice_len=LENGTH, traj_key="episode"),
                              batch_size=BATCH * LENGTH)
        self.b.extend(td)
        try:  # the sum tree is TorchRL's C++ extension: some wheels lack it
            sampler = PrioritizedSliceSampler(n, alpha=0.6, beta=0.4, slice_len=LENGTH, traj_key="episode")
        except RuntimeError as e:
            print(f"TorchRL prioritized: not measured ({e})")
            self.per = None
        else:
            self.per = ReplayBuffer(storage=LazyTensorStorage(n), batch_size=BATCH * LENGTH, sampler=sampler)
            self.per.extend(td)
        self.g = torch.Generator().manual_seed(1)

    def seq(self) -> Any:
        return self.b.sample().reshape(BATCH, LENGTH)

    def per_seq(self) -> None:
        if self.per is None:
            raise NotImplementedError
        batch, info = self.per.sample(return_info=True)
        prio = (torch.rand(BATCH, generator=self.g) + 0.01).repeat_interleave(LENGTH)  # one priority per sequence
        self.per.update_priority(info["index"], prio)


class Tianshou:
    name = "Tianshou ReplayBuffer(stack_num=80)"

    def __init__(self, eps: List[Dict[str, np.ndarray]]) -> None:
        from tianshou.data import Batch, PrioritizedReplayBuffer, ReplayBuffer

        n = EPISODES * EP_LEN
        self.b = ReplayBuffer(n, stack_num=LENGTH, ignore_obs_next=True)
        self.per = PrioritizedReplayBuffer(n, alpha=0.6, beta=0.4, stack_num=LENGTH, ignore_obs_next=True)
        for e in eps:
            for t in range(EP_LEN):
                last = t == EP_LEN - 1
                item = Batch(obs=e["obs"][t], act=e["action"][t], rew=e["reward"][t], terminated=last, truncated=False,
                             obs_next=e["obs"][t + 1], info={}, policy=Batch(state=e["state"][t]))
                self.b.add(item)
                self.per.add(item)
        self.rng = np.random.default_rng(1)
        np.random.seed(0)

    def _stack(self, buf: Any, idx: np.ndarray) -> Dict[str, Any]:
        return {"obs": buf.get(idx, "obs", stack_num=LENGTH), "act": buf.get(idx, "act", stack_num=LENGTH),
                "rew": buf.get(idx, "rew", stack_num=LENGTH), "done": buf.get(idx, "done", stack_num=LENGTH),
                "state": buf.get(idx, "policy", stack_num=1).state}

    def seq(self) -> Any:
        return self._stack(self.b, self.b.sample_indices(BATCH))

    def per_seq(self) -> None:
        idx = self.per.sample_indices(BATCH)
        self._stack(self.per, idx)
        self.per.update_weight(idx, self.rng.random(BATCH) + 0.01)


def block(fn: Callable[[], Any], calls: int) -> float:
    for _ in range(max(1, calls // 5)):  # warm caches after the switch
        fn()
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("uptime at start:", os.popen("uptime").read().strip())
    eps = episodes()
    contestants = []
    for cls in (Stride, TorchRL, Tianshou):
        t0 = time.process_time()
        c = cls(eps)
        print(f"{cls.name}: filled in {time.process_time() - t0:.1f} CPU s")
        contestants.append(c)
    results: Dict[str, Dict[str, List[float]]] = {c.name: {"seq": [], "per_seq": []} for c in contestants}
    for _ in range(args.rounds):
        for op in ("seq", "per_seq"):
            for c in contestants:
                try:
                    results[c.name][op].append(block(getattr(c, op), args.calls))
                except NotImplementedError:
                    results[c.name][op].append(float("nan"))
    print(f"\nsequences/s (process CPU; batch {BATCH} x {LENGTH} steps, median of {args.rounds} blocks of {args.calls} calls)")
    print(f"{'contestant':50s} {'uniform':>10s} {'prioritized+update':>20s}")
    base = {op: statistics.median(results[Stride.name][op]) for op in ("seq", "per_seq")}
    for name, ops in results.items():
        med = {op: statistics.median(v) for op, v in ops.items()}
        print(f"{name:50s} {BATCH / med['seq']:10.0f} {BATCH / med['per_seq']:20.0f}   "
              f"(Stride / this: {med['seq'] / base['seq']:.2f}x, {med['per_seq'] / base['per_seq']:.2f}x)")
    print("uptime at end:", os.popen("uptime").read().strip())


if __name__ == "__main__":
    main()
