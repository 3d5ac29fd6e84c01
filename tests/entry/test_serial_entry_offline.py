"""serial_pipeline_offline and ``stride -m offline``: BC on CartPole from a small dataset made in the
test (Stride's writer, and Minari's own DataCollector), the dataset replayed through the policy's
process_transition, exact resume, and one-line errors for a bad data_path or an env-step limit."""

from __future__ import annotations

import copy
import os

import gymnasium as gym
import numpy as np
import pytest
import torch

minari = pytest.importorskip("minari")

from stride.data.demo import load_demo_dataset, stack_episode, write_demo_dataset  # noqa: E402
from stride.entry import serial_pipeline_offline  # noqa: E402
from stride.entry.cli import main as cli  # noqa: E402
from stride.entry.serial_entry_offline import dataset_samples  # noqa: E402
from stride.utils.errors import ConfigError  # noqa: E402
from stride.worker.learner.learner import read_checkpoint  # noqa: E402
from stride.zoo.cartpole.config import cartpole_bc_config as cartpole  # noqa: E402
from stride.zoo.pendulum.config import pendulum_bc_config as pendulum  # noqa: E402


def expert(obs: np.ndarray) -> int:
    """A linear CartPole controller that keeps the pole up (and the cart near the centre) for 500 steps."""
    return int(0.1 * obs[0] + 0.5 * obs[1] + 5.0 * obs[2] + obs[3] > 0)


def expert_episodes(n: int, seed: int = 0):
    env = gym.make("CartPole-v1")
    episodes = []
    for k in range(n):
        obs, _ = env.reset(seed=seed + k)
        steps, done = [], False
        while not done:
            action = expert(obs)
            nxt, reward, terminated, truncated, _ = env.step(action)
            steps.append(dict(obs=obs, action=np.int64(action), reward=np.float32(reward), next_obs=nxt,
                              terminated=terminated, truncated=truncated))
            obs, done = nxt, terminated or truncated
        episodes.append(stack_episode(steps))
    env.close()
    return episodes


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> str:
    env = gym.make("CartPole-v1")
    path = write_demo_dataset(str(tmp_path_factory.mktemp("demo") / "cartpole"), expert_episodes(4),
                              env.observation_space, env.action_space, env_id="CartPole-v1", seed=0)
    env.close()
    return path


def config(data_path: str, **evaluator):
    main = copy.deepcopy(cartpole.main_config)
    main["env"].update(evaluator_env_num=4, n_evaluator_episode=4)
    main["policy"]["collect"]["data_path"] = data_path
    main["policy"]["eval"]["evaluator"].update(eval_freq=100, confirm_episode=8, **evaluator)
    return main, copy.deepcopy(cartpole.create_config)


def test_bc_cartpole_reaches_the_stop_value_from_four_expert_episodes(dataset, tmp_path):
    policy = serial_pipeline_offline(config(dataset), seed=0, max_train_iter=2000, exp_name=str(tmp_path / "bc"),
                                     progress=False)
    result = policy.result
    assert result["stop"] and result["env_step"] == 0 and result["eval_return"] >= 475
    assert result["dataset"]["episodes"] == 4 and result["dataset"]["transitions"] == 2000
    assert os.path.isfile(result["final_checkpoint"])
    rows = open(os.path.join(result["exp_dir"], "progress.csv")).read().splitlines()
    assert rows[0].startswith("train_iter,envstep,eval_return_mean,confirm_return_mean") and len(rows) >= 3


@pytest.mark.filterwarnings("ignore::UserWarning")  # Minari advises on optional metadata
def test_a_dataset_made_by_minari_itself_trains(tmp_path, monkeypatch):
    from minari.data_collector import EpisodeBuffer

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "root"))
    buffers = []
    for k, ep in enumerate(expert_episodes(4, seed=100)):
        buffers.append(EpisodeBuffer(id=k, observations=np.concatenate([ep["obs"], ep["next_obs"][-1:]]),
                                     actions=ep["action"], rewards=ep["reward"].astype(np.float64),
                                     terminations=ep["terminated"], truncations=ep["truncated"]))
    minari.create_dataset_from_buffers("elsewhere/cartpole-expert-v0", buffers, env="CartPole-v1",
                                       algorithm_name="linear controller", description="made by minari")
    # by local Minari id: the env spec Minari recorded (CartPole-v1) is checked against the config's
    policy = serial_pipeline_offline(config("elsewhere/cartpole-expert-v0"), seed=1, max_train_iter=2000,
                                     exp_name=str(tmp_path / "bc"), progress=False)
    assert policy.result["stop"] and policy.result["eval_return"] >= 475


def test_the_dataset_is_replayed_through_process_transition(tmp_path):
    """Continuous: the dataset's torques (env units) reach the buffer in the actor's [-1, 1]."""
    env = gym.make("Pendulum-v1")
    rng = np.random.default_rng(0)
    steps = []
    obs, _ = env.reset(seed=0)
    for t in range(5):
        action = rng.uniform(-2, 2, size=1).astype(np.float32)
        nxt, reward, terminated, _, _ = env.step(action)
        steps.append(dict(obs=obs, action=action, reward=np.float32(reward), next_obs=nxt,
                          terminated=terminated, truncated=t == 4))
        obs = nxt
    data = load_demo_dataset(write_demo_dataset(str(tmp_path / "d"), [stack_episode(steps)], env.observation_space,
                                                env.action_space, env_id="Pendulum-v1"))
    from stride.config import compile_config
    from stride.entry.utils import build_policy

    main = copy.deepcopy(pendulum.main_config)
    policy = build_policy(compile_config(main, copy.deepcopy(pendulum.create_config), save_cfg=False,
                                         action_space=env.action_space))
    samples = dataset_samples(data, policy.collect_mode)
    np.testing.assert_allclose(np.stack([s["action"] for s in samples]), data.columns["action"] / 2, atol=1e-6)
    np.testing.assert_array_equal(np.stack([s["next_obs"] for s in samples]), data.columns["next_obs"])
    assert [s["done"] for s in samples] == [False] * 5  # truncated, not terminated: bootstraps


def test_resume_continues_exactly(dataset, tmp_path):
    main, create = config(dataset)
    main["env"]["stop_value"] = 1e9  # never stops: the iteration limit ends both runs
    main["policy"]["eval"]["evaluator"]["eval_freq"] = 10_000
    whole = serial_pipeline_offline([main, create], seed=3, max_train_iter=60, exp_name=str(tmp_path / "whole"),
                                    progress=False)
    half = serial_pipeline_offline([main, create], seed=3, max_train_iter=30, exp_name=str(tmp_path / "half"),
                                   progress=False)
    resumed = serial_pipeline_offline(None, max_train_iter=60, resume=half.result["exp_dir"], progress=False)
    assert resumed.result["train_iter"] == 60
    a = read_checkpoint(whole.result["final_checkpoint"])["policy"]["model"]
    b = read_checkpoint(resumed.result["final_checkpoint"])["policy"]["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    again = serial_pipeline_offline(None, resume=resumed.result["exp_dir"], progress=False)
    assert again.result.get("already_finished")


def test_bad_data_path_is_one_line(tmp_path, capsys):
    missing = str(tmp_path / "nope")
    assert cli(["-m", "offline", "-e", "cartpole", "-p", "bc", "--set", f"policy.collect.data_path={missing}",
                "--exp-name", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and missing in err and "not found" in err
    assert not os.path.exists(tmp_path / "x")  # nothing written before the data is read


def test_a_dataset_of_another_env_and_an_env_step_limit_are_refused(tmp_path, dataset, capsys):
    main, create = copy.deepcopy(pendulum.main_config), copy.deepcopy(pendulum.create_config)
    main["policy"]["collect"]["data_path"] = dataset
    with pytest.raises(ConfigError, match="recorded on env 'CartPole-v1'"):
        serial_pipeline_offline([main, create], exp_name=str(tmp_path / "p"), progress=False)
    assert cli(["-m", "offline", "-e", "cartpole", "-p", "bc", "--env-step", "100",
                "--set", f"policy.collect.data_path={dataset}"]) == 2
    assert "--env-step" in capsys.readouterr().err
    main, create = config(dataset, eval_freq_envstep=1000)
    with pytest.raises(ConfigError, match="eval_freq_envstep"):
        serial_pipeline_offline([main, create], exp_name=str(tmp_path / "q"), progress=False)


def test_parallel_reads_the_demonstrations_before_starting_ray(tmp_path):
    """-m parallel takes demonstrations (its replay actor mixes them in): a missing dataset is one line
    before Ray starts, and no experiment folder is left."""
    from stride.entry import parallel_pipeline
    from stride.zoo.cartpole.config import cartpole_sqil_config as sqil

    with pytest.raises(ConfigError, match="demonstration dataset 'cartpole_expert_demo' not found"):
        parallel_pipeline([copy.deepcopy(sqil.main_config), copy.deepcopy(sqil.create_config), {}], seed=0,
                          exp_name=str(tmp_path / "exp"))
    assert not os.listdir(tmp_path)


def test_the_online_pipeline_refuses_an_offline_policy(dataset, tmp_path):
    from stride.entry import serial_pipeline

    with pytest.raises(ConfigError, match="use serial_pipeline_offline"):
        serial_pipeline(config(dataset), exp_name=str(tmp_path / "s"), progress=False)
    assert not os.path.exists(tmp_path / "s")
