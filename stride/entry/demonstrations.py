"""Demonstrations in a run: the dataset a config names at ``policy.collect.data_path`` (read by the
one reader, :func:`stride.data.demo.load_demo_dataset`, and checked against the run's env), turned
into the policy's own train samples, for the offline entry (its whole replay) and the serial
pipeline (a :class:`~stride.data.buffer.demo_mix.DemoMixBuffer` beside the agent's: SQIL, R2D3).

The dataset is replayed through ``collect_mode.process_transition`` / ``get_train_sample`` -- the
calls the collector makes on live steps -- with ``info['demo'] = True`` on each timestep, so a
sample holds what the policy would store had it collected the step itself (SAC-style actors their
[-1, 1] actions, n-step policies their targets) and a policy that treats demonstrations apart
(SQIL: reward 1 for the expert's, 0 for its own) can tell them from its own steps.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gymnasium as gym

from ..config import Config
from ..data import ReplayBuffer, create_buffer
from ..data.buffer.demo_mix import DemoMixBuffer
from ..data.demo import DemoDataset, load_demo_dataset
from ..envs import BaseEnvTimestep
from ..policy.base_policy import CollectMode, Policy
from ..utils.errors import ConfigError
from ..worker.protocols import ScalarWriter

#: an env's observation or action space (None where the env manager has none)
Space = gym.spaces.Space[object]


def read_dataset(cfg: Config, observation_space: Optional[Space], action_space: Optional[Space]) -> DemoDataset:
    """The dataset ``policy.collect.data_path`` names, checked to be recorded on the config's env."""
    path = cfg.policy.collect.get("data_path")
    if not isinstance(path, str) or not path:
        raise ConfigError(f"policy.collect.data_path must name a demonstration dataset (a Minari dataset folder or "
                          f"local id, e.g. from stride -m collect_demo --out DIR), got {path!r}")
    dataset = load_demo_dataset(path)
    if observation_space is not None and action_space is not None:  # (every built-in env manager has both)
        dataset.check_env(observation_space, action_space, cfg.env.get("env_id"))
    return dataset


def dataset_samples(dataset: DemoDataset, collect_mode: CollectMode) -> List[Dict[str, object]]:
    """The dataset's episodes as the policy's train samples: each transition through
    ``process_transition`` (with the step's timestep as an env would have given it, marked
    ``info['demo']``), each episode
    through ``get_train_sample``."""
    cols = dataset.columns
    samples: List[Dict[str, object]] = []
    for start, length in zip(dataset.starts.tolist(), dataset.lengths.tolist()):
        episode = []
        for i in range(start, start + length):
            terminated, truncated = bool(cols["terminated"][i]), bool(cols["truncated"][i])
            timestep = BaseEnvTimestep(_row(cols["next_obs"], i), float(cols["reward"][i]), terminated or truncated,
                                       {"terminated": terminated, "truncated": truncated and not terminated, "demo": True})
            episode.append(collect_mode.process_transition(_row(cols["obs"], i), {"action": cols["action"][i]},
                                                           timestep))
        samples.extend(collect_mode.get_train_sample(episode))
    return samples


def _row(col: Any, i: int) -> Any:
    return {k: v[i] for k, v in col.items()} if isinstance(col, dict) else col[i]


def with_demonstrations(cfg: Config, policy: Policy, agent_buffer: ReplayBuffer, observation_space: Optional[Space],
                        action_space: Optional[Space],
                        tb: Optional[ScalarWriter] = None, exp: Optional[str] = None) -> DemoMixBuffer:
    """``agent_buffer`` beside a buffer of the configured type (prioritised or not, with its own
    sampler) filled with the dataset's samples; batches hold ``policy.collect.demo_fraction``
    (default 0.5) of demonstrations, and the learner's priorities go back to each row's own store."""
    dataset = read_dataset(cfg, observation_space, action_space)
    samples = dataset_samples(dataset, policy.collect_mode)
    demo_cfg = dict(cfg.policy.other.replay_buffer, replay_buffer_size=max(len(samples), 1), min_sample_size=0)
    demo = create_buffer(demo_cfg, seed=cfg.seed + 1, tb_logger=tb, exp_name=exp)
    demo.push(samples)
    return DemoMixBuffer(agent_buffer, demo, float(cfg.policy.collect.get("demo_fraction", 0.5)))
