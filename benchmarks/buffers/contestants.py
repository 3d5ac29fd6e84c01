"""The contestants of the replay-buffer benchmark (``bench.py``): each library's buffer behind one
small interface (push one, push a batch, sample, prioritized sample + update), so the driver times
every library the same way. Stride (naive, advanced; distinct or i.i.d. draws; frames-once), a bare
NumPy ring, Tianshou (plain and ``save_only_last_obs``), TorchRL, SB3 (plain and
``optimize_memory_usage``). Peers are imported inside their adapters: a process loads only its own."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

CAP = 100_000  # items a buffer holds (bench.py --capacity changes it per process)
CASES = {"float4": ((4,), np.float32), "atari": ((4, 84, 84), np.uint8), "atari_frames": ((4, 84, 84), np.uint8)}


class Bare:
    """A bare NumPy ring: preallocated arrays, integer write pointer, uniform fancy-index sampling."""

    name = "bare NumPy ring"

    def __init__(self, case: str) -> None:
        shape, dtype = CASES[case]
        self.cols = {"obs": np.zeros((CAP, *shape), dtype), "action": np.zeros(CAP, np.int64),
                     "reward": np.zeros(CAP, np.float32), "next_obs": np.zeros((CAP, *shape), dtype),
                     "done": np.zeros(CAP, bool)}
        self.ptr = 0
        self.size = 0
        self.rng = np.random.default_rng(0)

    def push1(self, it: Dict[str, Any]) -> None:
        p = self.ptr
        for k, col in self.cols.items():
            col[p] = it[k]
        self.ptr = (p + 1) % CAP
        self.size = min(self.size + 1, CAP)

    def push8(self, cols: Dict[str, np.ndarray]) -> None:
        idx = (self.ptr + np.arange(8)) % CAP
        for k, col in self.cols.items():
            col[idx] = cols[k]
        self.ptr = int((self.ptr + 8) % CAP)
        self.size = min(self.size + 8, CAP)

    def sample(self, n: int) -> Dict[str, np.ndarray]:
        idx = self.rng.integers(0, self.size, n)
        return {k: col[idx] for k, col in self.cols.items()}

    def bytes_per_item(self) -> float:
        return sum(c.nbytes for c in self.cols.values()) / CAP

    def stored_next_obs(self, k: int) -> np.ndarray:
        return self.cols["next_obs"][k]

    def sample_distinct(self, n: int) -> Dict[str, np.ndarray]:
        """``n`` distinct items, NumPy's way (Floyd's algorithm + shuffle)."""
        idx = self.rng.choice(self.size, n, replace=False)
        return {k: col[idx] for k, col in self.cols.items()}


class StrideNaive:
    name = "Stride NaiveReplayBuffer"
    replace = False  # the buffers' default: distinct items per batch

    def __init__(self, case: str) -> None:
        from stride.data import NaiveReplayBuffer

        self.b = NaiveReplayBuffer({"replay_buffer_size": CAP, **self.mode()}, seed=0)

    @classmethod
    def mode(cls) -> Dict[str, Any]:
        return {"replace": True} if cls.replace else {}

    def push1(self, it):
        self.b.push(it)

    def push8(self, items):
        self.b.push(items)

    def sample(self, n):
        return self.b.sample(n)

    def sample_batch(self, n):
        return self.b.sample_batch(n)

    def bytes_per_item(self) -> float:
        return self.b.storage.nbytes / CAP

    def stored_next_obs(self, k: int) -> np.ndarray:
        return self.b.storage.get_columns(np.array([k]))["next_obs"][0]


class StrideAdvanced(StrideNaive):
    name = "Stride AdvancedReplayBuffer"

    def __init__(self, case: str) -> None:
        from stride.data import AdvancedReplayBuffer

        self.b = AdvancedReplayBuffer({"replay_buffer_size": CAP, "priority": False, **self.mode()}, seed=0)  # uniform
        self.per = AdvancedReplayBuffer({"replay_buffer_size": CAP, "priority": True, **self.mode()}, seed=0)
        self.rng = np.random.default_rng(1)

    def fill_per(self, cols: Dict[str, np.ndarray], n: int) -> None:
        for s in range(0, n, 1000):
            self.per.push([{k: v[i] for k, v in cols.items()} for i in range(s, min(s + 1000, n))])

    def per64(self):
        _, ticket = self.per.sample_batch(64)
        self.per.update(ticket, self.rng.random(64) + 0.01)

    def per64_list(self):
        s = self.per.sample(64)
        self.per.update({"replay_unique_id": [d["replay_unique_id"] for d in s],
                         "replay_buffer_idx": [d["replay_buffer_idx"] for d in s],
                         "priority": self.rng.random(64) + 0.01})


class StrideNaiveFrames(StrideNaive):
    name = "Stride Naive frame_stack=4 (frames once)"

    @classmethod
    def mode(cls) -> Dict[str, Any]:
        return {"frame_stack": 4}


class StrideAdvancedFrames(StrideAdvanced):
    name = "Stride Advanced frame_stack=4 (frames once)"

    @classmethod
    def mode(cls) -> Dict[str, Any]:
        return {"frame_stack": 4}


class StrideNaiveReplace(StrideNaive):
    name = "Stride NaiveReplayBuffer replace=True"
    replace = True


class StrideAdvancedReplace(StrideAdvanced):
    name = "Stride AdvancedReplayBuffer replace=True"
    replace = True


class Tianshou:
    name = "Tianshou ReplayBuffer / PrioritizedReplayBuffer"

    def __init__(self, case: str) -> None:
        from tianshou.data import Batch, PrioritizedReplayBuffer, ReplayBuffer, VectorReplayBuffer

        self.Batch = Batch
        self.b = ReplayBuffer(CAP)
        self.vb = VectorReplayBuffer(CAP, 8)
        self.per = PrioritizedReplayBuffer(CAP, alpha=0.6, beta=0.4)
        self.rng = np.random.default_rng(1)
        np.random.seed(0)

    def _batch(self, it):
        return self.Batch(obs=it["obs"], act=it["action"], rew=it["reward"], terminated=it["done"],
                          truncated=False, obs_next=it["next_obs"], info={})

    def push1(self, it):
        self.b.add(self._batch(it))

    def push8(self, cols):
        self.vb.add(self.Batch(obs=cols["obs"], act=cols["action"], rew=cols["reward"], terminated=cols["done"],
                               truncated=np.zeros(8, bool), obs_next=cols["next_obs"], info={}),
                    buffer_ids=np.arange(8))

    def sample(self, n):
        return self.b.sample(n)

    def top_up(self, items):
        for it in items:
            self.push1(it)

    def fill_per(self, cols, n):
        for i in range(n):
            self.per.add(self._batch({k: v[i] for k, v in cols.items()}))

    def per64(self):
        batch, idx = self.per.sample(64)
        self.per.update_weight(idx, self.rng.random(64) + 0.01)


class TianshouFrames(Tianshou):
    """Tianshou's own frames-once mode: ``save_only_last_obs`` keeps ``obs[-1]``, ``stack_num=4`` rebuilds
    stacks from the previous steps, ``ignore_obs_next`` reads ``next_obs`` from the following step."""

    name = "Tianshou ReplayBuffer stack_num=4 last obs"

    def __init__(self, case: str) -> None:
        from tianshou.data import Batch, PrioritizedReplayBuffer, ReplayBuffer, VectorReplayBuffer

        self.Batch = Batch
        kw = {"stack_num": 4, "ignore_obs_next": True, "save_only_last_obs": True}
        self.b = ReplayBuffer(CAP, **kw)
        self.vb = VectorReplayBuffer(CAP, 8, **kw)
        self.per = PrioritizedReplayBuffer(CAP, alpha=0.6, beta=0.4, **kw)
        self.rng = np.random.default_rng(1)
        np.random.seed(0)

    def bytes_per_item(self) -> float:
        b = self.b
        return sum(getattr(b, k).nbytes for k in ("obs", "act", "rew", "terminated", "truncated", "done")) / CAP

    def stored_next_obs(self, k: int) -> np.ndarray:
        return np.asarray(self.b[np.array([k])].obs_next[0])


class TorchRL:
    name = "TorchRL ReplayBuffer(LazyTensorStorage)"

    def __init__(self, case: str) -> None:
        import torch
        from tensordict import TensorDict
        from torchrl.data import LazyTensorStorage, PrioritizedSampler, RandomSampler, ReplayBuffer

        self.torch, self.TD = torch, TensorDict
        self.b = ReplayBuffer(storage=LazyTensorStorage(CAP), sampler=RandomSampler())
        self._per_args = (ReplayBuffer, LazyTensorStorage, PrioritizedSampler)
        self.g = torch.Generator().manual_seed(1)

    def _td(self, it):
        t = self.torch
        return self.TD({"obs": t.from_numpy(np.asarray(it["obs"])), "action": t.as_tensor(it["action"]),
                        "reward": t.as_tensor(it["reward"]), "next_obs": t.from_numpy(np.asarray(it["next_obs"])),
                        "done": t.as_tensor(it["done"])}, batch_size=[])

    def push1(self, it):
        self.b.add(self._td(it))

    def push8(self, cols):
        t = self.torch
        self.b.extend(self.TD({k: t.from_numpy(v) for k, v in cols.items()}, batch_size=[8]))

    def sample(self, n):
        return self.b.sample(n)

    def fill_per(self, cols, n):
        t = self.torch
        ReplayBuffer, LazyTensorStorage, PrioritizedSampler = self._per_args
        self.per = ReplayBuffer(storage=LazyTensorStorage(CAP), sampler=PrioritizedSampler(CAP, alpha=0.6, beta=0.4))
        for s in range(0, n, 1000):
            e = min(s + 1000, n)
            self.per.extend(self.TD({k: t.from_numpy(v[s:e]) for k, v in cols.items()}, batch_size=[e - s]))

    def per64(self):
        batch, info = self.per.sample(64, return_info=True)
        self.per.update_priority(info["index"], self.torch.rand(64, generator=self.g) + 0.01)


class SB3:
    name = "SB3 ReplayBuffer"
    optimize = False  # optimize_memory_usage: next_obs read from the next slot's obs

    def __init__(self, case: str) -> None:
        import warnings

        from gymnasium import spaces
        from stable_baselines3.common.buffers import ReplayBuffer

        shape, dtype = CASES[case]
        lo, hi = (0, 255) if dtype == np.uint8 else (-np.inf, np.inf)
        obs_space = spaces.Box(lo, hi, shape, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = {"optimize_memory_usage": True, "handle_timeout_termination": False} if self.optimize else {}
            self.b = ReplayBuffer(CAP, obs_space, spaces.Discrete(2), device="cpu", n_envs=1, **kw)
            self.b8 = ReplayBuffer(CAP, obs_space, spaces.Discrete(2), device="cpu", n_envs=8, **kw)

    def push1(self, it):
        self.b.add(it["obs"][None], it["next_obs"][None], np.asarray([it["action"]]), np.asarray([it["reward"]]),
                   np.asarray([it["done"]]), [{}])

    def push8(self, cols):
        self.b8.add(cols["obs"], cols["next_obs"], cols["action"], cols["reward"], cols["done"], [{}] * 8)

    def sample(self, n):
        return self.b.sample(n)

    def top_up(self, items):
        for it in items:
            self.push1(it)

    def bytes_per_item(self) -> float:
        b = self.b
        arrays = [b.observations, b.actions, b.rewards, b.dones, b.timeouts]
        if not self.optimize:
            arrays.append(b.next_observations)
        return sum(a.nbytes for a in arrays) / (b.buffer_size * b.n_envs)

    def stored_next_obs(self, k: int) -> np.ndarray:
        """What SB3's sampling reads as slot k's next_obs (optimized: the next slot's obs)."""
        b = self.b
        return b.observations[(k + 1) % b.buffer_size, 0] if self.optimize else b.next_observations[k, 0]


class SB3Optimize(SB3):
    name = "SB3 ReplayBuffer optimize_memory_usage"
    optimize = True


CLASSES = {"bare": Bare, "stride_naive": StrideNaive, "stride_advanced": StrideAdvanced,
           "stride_naive_replace": StrideNaiveReplace, "stride_advanced_replace": StrideAdvancedReplace,
           "tianshou": Tianshou, "torchrl": TorchRL, "sb3": SB3, "stride_naive_frames": StrideNaiveFrames,
           "stride_advanced_frames": StrideAdvancedFrames, "sb3_optimize": SB3Optimize,
           "tianshou_frames": TianshouFrames}
