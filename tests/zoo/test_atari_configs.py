"""Smoke tests of the Atari configs (a few hundred env steps through the pipeline, the env and model
wired as the config says; sizes shrunk here, never in the config) and uint8 observations end to end."""

from __future__ import annotations

import copy
from typing import Any, Dict, Tuple

import numpy as np
import pytest
import torch

pytest.importorskip("ale_py")
pytest.importorskip("cv2")

from stride.entry import serial_pipeline  # noqa: E402
from stride.entry.utils import build_env_managers, zoo_config, zoo_envs, zoo_policies  # noqa: E402

CONFIGS = [("pong", "dqn"), ("breakout", "ppo"), ("spaceinvaders", "dqn")]


def _small(env: str, policy: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    main, create = (copy.deepcopy(c) for c in zoo_config(env, policy))
    # 2 collector envs, 1 evaluator env; games cut at 100 agent steps so that an evaluation ends
    main["env"].update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=100)
    p = main["policy"]
    if policy == "dqn":
        p["random_collect_size"] = 64
        p["learn"].update(batch_size=8, update_per_collect=2)
        p["collect"]["n_sample"] = 16
        p["other"]["replay_buffer"]["replay_buffer_size"] = 500
    else:
        p["learn"].update(batch_size=32, epoch_per_collect=1)
        p["collect"]["n_sample"] = 64
    return main, create


def test_zoo_finds_the_atari_configs():
    for env, policy in CONFIGS:
        assert env in zoo_envs() and policy in zoo_policies(env)
        main, create = zoo_config(env, policy)
        assert create["env"]["type"] == "atari" and main["policy"]["model"]["obs_shape"] == [4, 84, 84]
        assert main["env"]["env_id"].startswith("ALE/") and main["env"]["env_id"].endswith("-v5")
    assert "cartpole" in zoo_envs() and "dqn_per" in zoo_policies("cartpole")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("env,policy", CONFIGS)
def test_config_runs_with_the_nature_cnn_and_uint8_batches(env, policy, tmp_path, monkeypatch):
    """The template picks the Nature CNN from the image obs_shape; every learner batch is uint8 frames."""
    from stride.model.common import NatureCNN
    from stride.policy.batching import PolicyIO

    main, create = _small(env, policy)
    create["env_manager"]["type"] = "base"  # the subprocess manager's uint8 path is tested below
    seen = []
    batch = PolicyIO.learn_batch

    def spy(self, data):
        out = batch(self, data)
        seen.append((out["obs"].dtype, tuple(out["obs"].shape[1:])))
        return out

    monkeypatch.setattr(PolicyIO, "learn_batch", spy)
    trained = serial_pipeline([main, create], seed=0, max_env_step=300, exp_name=str(tmp_path / env), progress=False)
    assert any(isinstance(m, NatureCNN) for m in trained._model.modules()), trained._model
    assert seen and all(s == (torch.uint8, (4, 84, 84)) for s in seen), seen
    assert trained.result["env_step"] >= 300 and trained.result["train_iter"] > 0


def test_the_command_runs_an_atari_config(tmp_path, capsys):
    from stride.entry.cli import main as cli_main

    rc = cli_main(["-m", "serial", "-e", "pong", "-p", "dqn", "-s", "0", "--env-step", "100", "--no-progress",
                   "--set", "env.collector_env_num=2", "--set", "env.evaluator_env_num=1",
                   "--set", "env.n_evaluator_episode=1", "--set", "env.max_episode_steps=50",
                   "--set", "policy.random_collect_size=32", "--set", "policy.learn.batch_size=8",
                   "--set", "policy.other.replay_buffer.replay_buffer_size=500", "--exp-name", str(tmp_path / "cli")])
    assert rc == 0, capsys.readouterr()


def test_the_evaluator_plays_whole_games():
    """env_factories(evaluator=True) applies AtariEnv.evaluator_env_cfg: no episodic life."""
    from stride.config import compile_config
    from stride.entry.utils import env_factories

    main, create = _small("breakout", "ppo")
    cfg = compile_config(main, create_cfg=create, save_cfg=False)
    train_env, eval_env = env_factories(cfg, 1)[0](), env_factories(cfg, 1, evaluator=True)[0]()
    assert "train=True" in repr(train_env) and "train=False" in repr(eval_env)


@pytest.mark.timeout(120)
def test_uint8_through_the_subprocess_manager_and_the_replay_buffer():
    """env -> shared memory -> replay storage (each frame once) -> sampled batch: the frames stay uint8."""
    from stride.config import compile_config
    from stride.data import NaiveReplayBuffer

    main, create = _small("pong", "dqn")
    main["env"].update(collector_env_num=2, evaluator_env_num=1)
    cfg = compile_config(main, create_cfg=create, save_cfg=False)
    collector_env, evaluator_env = build_env_managers(cfg, seed=0)
    assert "subprocess" in type(collector_env).__name__.lower()
    try:
        collector_env.launch()
        obs = collector_env.ready_obs
        # the config's buffer stores each frame once; a plain one of the same seed stores full stacks
        assert cfg.policy.other.replay_buffer.frame_stack == 4
        buffer = NaiveReplayBuffer(dict(replay_buffer_size=64, frame_stack=4), seed=0)
        plain = NaiveReplayBuffer(dict(replay_buffer_size=64), seed=0)
        for _ in range(20):
            actions = {i: np.int64(0) for i in obs}
            timesteps = collector_env.step(actions)
            for i, ts in timesteps.items():
                assert isinstance(ts.obs, np.ndarray) and ts.obs.dtype == np.uint8 and ts.obs.shape == (4, 84, 84)
                for b in (buffer, plain):
                    b.push(dict(obs=obs[i], next_obs=ts.obs, action=actions[i], reward=np.float32(ts.reward),
                                done=ts.done))
            obs = collector_env.ready_obs
        assert buffer.storage.frame_head <= 40 + 2 * 4  # one new frame per transition after each env's first stack
        batch, plain_batch = buffer.sample(8), plain.sample(8)
        assert batch is not None and all(b["obs"].dtype == np.uint8 and b["next_obs"].dtype == np.uint8 for b in batch)
        assert plain_batch is not None and all(b["obs"].tobytes() == p["obs"].tobytes() for b, p in zip(batch, plain_batch))
        sampled, sampled_plain = buffer.sample_batch(8), plain.sample_batch(8)
        assert sampled is not None and sampled_plain is not None
        (stacked, ticket), (want, plain_ticket) = sampled, sampled_plain
        assert stacked["obs"].dtype == np.uint8 and stacked["obs"].shape == (8, 4, 84, 84)
        assert list(ticket.ids) == list(plain_ticket.ids) and all(stacked[k].tobytes() == want[k].tobytes() for k in want)
    finally:
        collector_env.close()
        evaluator_env.close()


def test_a_saved_config_finds_the_atari_env_type_without_importing_the_zoo():
    """ENV_REGISTRY imports stride.zoo's families when a name is unknown: eval and --resume read
    total_config.json, which names env type 'atari' without importing stride.zoo.atari."""
    import subprocess
    import sys

    code = ("from stride.utils.registry import ENV_REGISTRY; import sys; "
            "assert 'stride.zoo.atari' not in sys.modules; print(ENV_REGISTRY.get('atari').__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "AtariEnv"
