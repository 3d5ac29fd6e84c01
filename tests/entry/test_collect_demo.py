"""collect_demo_data and ``stride -m collect_demo``: whole greedy episodes of the expert, written as Minari datasets."""

from __future__ import annotations

import copy
import os

import numpy as np
import pytest

pytest.importorskip("minari")

from stride.data.demo import load_demo_dataset  # noqa: E402
from stride.entry import collect_demo_data, serial_pipeline  # noqa: E402
from stride.entry.cli import main as cli  # noqa: E402
from stride.utils.errors import ConfigError  # noqa: E402


def _cfg(policy: str = "dqn"):
    if policy == "dqn":
        from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config
    else:
        from stride.zoo.cartpole.config.cartpole_ppo_config import create_config, main_config
    main = copy.deepcopy(main_config)
    main["env"].update(collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2)
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=100_000, confirm_episode=0)
    return main, copy.deepcopy(create_config)


@pytest.fixture(scope="module")
def expert(tmp_path_factory) -> str:
    """A briefly trained DQN checkpoint (its episodes are short: the test is about the plumbing)."""
    exp = str(tmp_path_factory.mktemp("expert") / "dqn")
    policy = serial_pipeline(_cfg(), seed=0, max_train_iter=40, exp_name=exp, progress=False)
    return str(policy.result["final_checkpoint"])


def test_the_command_writes_whole_greedy_episodes(expert, tmp_path, capsys):
    out = str(tmp_path / "demo")
    assert cli(["-m", "collect_demo", "-e", "cartpole", "-p", "dqn", "--ckpt", expert, "--episodes", "3",
                "--out", out, "-s", "5", "--set", "env.collector_env_num=2"]) == 0
    assert "wrote 3 episodes" in capsys.readouterr().out
    data = load_demo_dataset(out)
    assert len(data.lengths) == 3 and data.seed == 5 and data.env_id == "CartPole-v1"
    cols, starts = data.columns, data.starts
    for s, n in zip(starts, data.lengths):  # whole episodes: they end at their last step, and only there
        ends = cols["terminated"][s:s + n] | cols["truncated"][s:s + n]
        assert ends[-1] and not ends[:-1].any()
        np.testing.assert_array_equal(cols["next_obs"][s:s + n - 1], cols["obs"][s + 1:s + n])
    np.testing.assert_array_equal(data.returns, data.lengths)  # CartPole: 1 per step, recorded as collected
    assert data.meta["checkpoint"] == os.path.abspath(expert) and data.meta["policy_type"] == "dqn"
    # the actions are the expert's greedy ones (eval mode), not exploration
    from stride.config import compile_config
    from stride.entry.utils import build_policy
    from stride.worker.learner.learner import read_checkpoint

    main, create = _cfg()
    policy = build_policy(compile_config(main, create, save_cfg=False), enable_field=["eval"])
    policy.eval_mode.load_state_dict({"model": read_checkpoint(expert)["policy"]["model"]})
    greedy = policy.eval_mode.forward(dict(enumerate(cols["obs"])))
    np.testing.assert_array_equal([greedy[i]["action"] for i in range(len(data))], cols["action"])


def test_collect_count_counts_transitions_in_whole_episodes(expert, tmp_path):
    path = collect_demo_data(_cfg(), 0, expert, 50, out_dir=str(tmp_path / "d"))
    data = load_demo_dataset(path)
    assert len(data) >= 50 and len(data) - data.lengths[-1] < 50  # whole episodes, no more than needed
    again = load_demo_dataset(collect_demo_data(_cfg(), 0, expert, 50, out_dir=str(tmp_path / "e")))
    np.testing.assert_array_equal(again.columns["obs"], data.columns["obs"])  # same seed, same dataset


def test_bad_input_is_one_clear_error_and_writes_nothing(expert, tmp_path, capsys):
    out = str(tmp_path / "x")
    with pytest.raises(ConfigError, match="expert checkpoint '.*nope' does not exist"):
        collect_demo_data(_cfg(), 0, str(tmp_path / "nope"), n_episode=1, out_dir=out)
    with pytest.raises(ConfigError, match="does not fit policy 'ppo' of this config"):
        collect_demo_data(_cfg("ppo"), 0, expert, n_episode=1, out_dir=out)
    with pytest.raises(ConfigError, match="give exactly one of collect_count"):
        collect_demo_data(_cfg(), 0, expert, 10, n_episode=1, out_dir=out)
    with pytest.raises(ConfigError, match=">= 1, got 0"):
        collect_demo_data(_cfg(), 0, expert, 0, out_dir=out)
    assert not os.path.exists(out)
    os.makedirs(out)
    with pytest.raises(ConfigError, match="already exists"):
        collect_demo_data(_cfg(), 0, expert, n_episode=1, out_dir=out)
    capsys.readouterr()
    assert cli(["-m", "collect_demo", "-e", "cartpole", "-p", "dqn", "--episodes", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stride: error: -m collect_demo needs --ckpt PATH") and "\n" not in err
    assert cli(["-m", "collect_demo", "-e", "cartpol", "-p", "dqn", "--ckpt", expert, "--episodes", "2"]) == 2
    assert "unknown env 'cartpol' (did you mean 'cartpole'?)" in capsys.readouterr().err


def test_each_episode_records_its_reset_seed_and_replays_from_it(expert, tmp_path):
    """Minari's episode metadata holds each episode's reset seed (two envs interleaving their
    episodes): the env reset with it and stepped with the stored actions gives the stored
    observations and rewards, and another seed does not."""
    import minari

    out = collect_demo_data(list(_cfg()), 3, expert, n_episode=4, out_dir=str(tmp_path / "demo"))
    dataset = minari.MinariDataset(os.path.join(out, "data"))
    seeds = [meta["seed"] for meta in dataset.storage.get_episode_metadata(dataset.episode_indices)]
    assert len(seeds) == 4 and len(set(seeds)) == 4 and all(isinstance(s, int) for s in seeds)
    env = dataset.recover_environment()
    for episode, seed in zip(dataset.iterate_episodes(), seeds):
        obs, _ = env.reset(seed=seed)
        observations, rewards, ends = [obs], [], []
        for action in episode.actions:
            obs, reward, terminated, truncated, _ = env.step(action)
            observations.append(obs)
            rewards.append(reward)
            ends.append((terminated, truncated))
        np.testing.assert_array_equal(np.stack(observations), episode.observations)
        np.testing.assert_array_equal(rewards, episode.rewards)
        assert ends == list(zip(episode.terminations, episode.truncations))
        assert not np.array_equal(env.reset(seed=seed + 1)[0], episode.observations[0])
    env.close()
