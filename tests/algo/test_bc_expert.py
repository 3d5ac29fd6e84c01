"""Learning tests: BC reaches 95 % of its expert's return from a 10-episode dataset of the zoo's trained
expert (CartPole: PPO, Pendulum: SAC), confirmed over 100 episodes; SQIL reaches 90 % on CartPole.
Slow (each trains its expert first); the CI ones use a hand-written expert
(tests/entry/test_serial_entry_offline.py, tests/policy/test_sqil_policy.py)."""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("minari")

from stride.entry import collect_demo_data, serial_pipeline, serial_pipeline_offline  # noqa: E402
from stride.zoo.cartpole.config import cartpole_bc_config, cartpole_ppo_config, cartpole_sqil_config  # noqa: E402
from stride.zoo.pendulum.config import pendulum_bc_config, pendulum_sac_config  # noqa: E402

#: Pendulum's returns are negative: "95 % of the expert" is read on the span from a random policy
RANDOM_PENDULUM = -1200.0


def _expert(module, seed: int, tmp_path):
    pair = [copy.deepcopy(module.main_config), copy.deepcopy(module.create_config)]
    expert = serial_pipeline(pair, seed=seed, max_env_step=100_000, exp_name=str(tmp_path / "expert"), progress=False)
    assert expert.result["stop"], f"the expert did not reach its stop value: {expert.result}"
    path = collect_demo_data(pair, seed, expert.result["final_checkpoint"], n_episode=10, out_dir=str(tmp_path / "demo"))
    return float(expert.result["eval_return"]), path


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bc_cartpole(seed, tmp_path):
    expert_return, path = _expert(cartpole_ppo_config, seed, tmp_path)
    main = copy.deepcopy(cartpole_bc_config.main_config)
    main["env"]["stop_value"] = 0.95 * expert_return
    main["policy"]["collect"]["data_path"] = path
    policy = serial_pipeline_offline([main, copy.deepcopy(cartpole_bc_config.create_config)], seed=seed,
                                     max_train_iter=20_000, exp_name=str(tmp_path / "bc"), progress=False)
    assert policy.result["stop"], policy.result


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bc_pendulum(seed, tmp_path):
    expert_return, path = _expert(pendulum_sac_config, seed, tmp_path)
    main = copy.deepcopy(pendulum_bc_config.main_config)
    main["env"]["stop_value"] = RANDOM_PENDULUM + 0.95 * (expert_return - RANDOM_PENDULUM)
    main["policy"]["collect"]["data_path"] = path
    policy = serial_pipeline_offline([main, copy.deepcopy(pendulum_bc_config.create_config)], seed=seed,
                                     max_train_iter=20_000, exp_name=str(tmp_path / "bc"), progress=False)
    assert policy.result["stop"], policy.result


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sqil_cartpole(seed, tmp_path):
    expert_return, path = _expert(cartpole_ppo_config, seed, tmp_path)
    main = copy.deepcopy(cartpole_sqil_config.main_config)
    main["env"]["stop_value"] = 0.9 * expert_return
    main["policy"]["collect"]["data_path"] = path
    policy = serial_pipeline([main, copy.deepcopy(cartpole_sqil_config.create_config)], seed=seed,
                             max_env_step=100_000, exp_name=str(tmp_path / "sqil"), progress=False)
    assert policy.result["stop"], policy.result
