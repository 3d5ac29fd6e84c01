"""Learning test: GAIL (DQN learner) reaches 90 % of its expert's return on CartPole-v1 from 10 demonstrations,
confirmed over 100 episodes, without ever training on the env's reward (tests/reward_model/test_gail.py checks
the learner's batches)."""

from __future__ import annotations

import copy
import time

import pytest

pytest.importorskip("minari")

from stride.entry import collect_demo_data, serial_pipeline, serial_pipeline_reward_model  # noqa: E402
from stride.zoo.cartpole.config import cartpole_dqn_gail_config, cartpole_ppo_config  # noqa: E402

ENV_STEP_BUDGET = 30_000


def _expert_demo(tmp_path) -> tuple:
    """The zoo's CartPole PPO trained to its stop value (475, confirmed), and 10 of its greedy episodes."""
    pair = [copy.deepcopy(cartpole_ppo_config.main_config), copy.deepcopy(cartpole_ppo_config.create_config)]
    expert = serial_pipeline(pair, seed=0, max_env_step=100_000, exp_name=str(tmp_path / "expert"), progress=False)
    assert expert.result["stop"], f"the expert did not reach its stop value: {expert.result}"
    path = collect_demo_data(pair, 0, expert.result["final_checkpoint"], n_episode=10, out_dir=str(tmp_path / "demo"))
    return float(expert.result["eval_return"]), path


def _gail(seed: int, tmp_path, reward_type: str = "positive") -> dict:
    expert_return, path = _expert_demo(tmp_path)
    main = copy.deepcopy(cartpole_dqn_gail_config.main_config)
    main["env"]["stop_value"] = 0.9 * expert_return
    main["reward_model"].update(data_path=path, reward_type=reward_type)
    cpu0 = time.process_time()
    policy = serial_pipeline_reward_model([main, copy.deepcopy(cartpole_dqn_gail_config.create_config)], seed=seed,
                                          max_env_step=ENV_STEP_BUDGET, exp_name=str(tmp_path / f"gail{seed}"),
                                          progress=False)
    result = dict(policy.result, expert_return=expert_return, total_cpu_seconds=time.process_time() - cpu0)
    assert result["stop"], f"seed {seed}: GAIL did not confirm {0.9 * expert_return:.1f} within {ENV_STEP_BUDGET} " \
                           f"env steps: {result}"
    return result


@pytest.mark.learning
@pytest.mark.timeout(900)
def test_gail_cartpole_seed0(tmp_path):
    _gail(0, tmp_path)


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [1, 2])
def test_gail_cartpole_other_seeds(seed, tmp_path):
    _gail(seed, tmp_path)


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_gail_cartpole_logit_reward(tmp_path):
    """The 'logit' reward pays nothing for merely surviving: reaching the stop value with it is imitation."""
    _gail(0, tmp_path, reward_type="logit")
