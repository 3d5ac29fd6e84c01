"""stride.entry.serial_entry: the parts serial_pipeline is made of refuse what they cannot do in one line."""

from __future__ import annotations

import pytest

from stride.config import Config
from stride.entry.serial_entry import load_cfg, random_collect, serial_pipeline
from stride.utils.errors import ConfigError


def test_no_config_and_no_resume_is_one_line():
    with pytest.raises(ConfigError, match="give a config"):
        load_cfg(None, 0, None, None)
    with pytest.raises(ConfigError, match="give a config"):
        serial_pipeline(None)


def test_random_collect_needs_a_sample_or_episode_collector():
    cfg = Config({"seed": 0, "policy": {"random_collect_size": 10}})
    with pytest.raises(ConfigError, match="random_collect_size=10 needs a sample or episode collector"):
        random_collect(cfg, None, object(), None)


def test_random_collect_by_episodes_pushes_whole_random_episodes_until_the_size():
    """HER's warm-up: an episode collector gathers whole episodes of random actions, at least
    random_collect_size env steps, then collects with the policy again."""
    from stride.worker.collector import EpisodeCollector
    from tests.worker.stride_worker_fakes import make_manager, make_policy

    class Sink:
        def __init__(self):
            self.pushes = []

        def push(self, data, cur_collector_envstep=-1):
            self.pushes.append((data, cur_collector_envstep))

    env = make_manager(2, length=4)
    policy = make_policy(collect={"n_sample": None, "n_episode": 1})
    collector = EpisodeCollector(None, env, policy.collect_mode)
    sink = Sink()
    try:
        random_collect(Config({"seed": 0, "policy": {"random_collect_size": 10}}), policy, collector, sink)
        # 2 envs x 4-step episodes: one episode per push; 10 steps need 3 episodes (12 env steps stepped)
        assert [len(data) for data, _ in sink.pushes] == [1, 1, 1]
        assert all(len(data[0]) == 4 and data[0][-1]["done"] for data, _ in sink.pushes)
        assert collector.envstep >= 10 and [step for _, step in sink.pushes][-1] == collector.envstep
        actions = [int(t["action"]) for data, _ in sink.pushes for t in data[0]]
        assert set(actions) == {0, 1}  # uniformly random over Discrete(2), not the greedy policy
    finally:
        env.close()
