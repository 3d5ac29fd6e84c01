"""mountaincar: the zoo finds its R2D2 and R2D3 configs (R2D3's = R2D2's + the demonstrations), the
scripted expert reaches the flag in every episode and its dataset is one the runs read, and the R2D3
config trains on it (a smoke run; learning is benchmarks/r2d3's job: R2D2 alone needs far more
than a test's budget)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from stride.config import compile_config
from stride.entry.utils import zoo_config, zoo_policies


def test_r2d3_config_is_r2d2s_plus_the_demonstrations():
    assert {"r2d2", "r2d3"} <= set(zoo_policies("mountaincar"))
    r2d2 = compile_config(*zoo_config("mountaincar", "r2d2"), save_cfg=False, seed=0)
    r2d3 = compile_config(*zoo_config("mountaincar", "r2d3"), save_cfg=False, seed=0)
    assert r2d3.policy.type == "r2d3" and r2d3.policy.collect.demo_fraction == 0.25
    assert r2d3.env == r2d2.env and r2d3.env.env_id == "MountainCar-v0" and r2d3.env.stop_value == -150
    for key in ("model", "learn", "other", "eval", "burnin_step", "learn_unroll_len", "nstep", "discount_factor"):
        assert r2d3.policy[key] == r2d2.policy[key], key


def test_energy_pumping_action():
    from stride.zoo.mountaincar import energy_pumping_action

    assert [energy_pumping_action(np.array([-0.5, v], np.float32)) for v in (0.01, 0.0, -0.01)] == [2, 2, 0]


pytest.importorskip("minari")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> str:
    from stride.zoo.mountaincar import write_expert_demo

    return write_expert_demo(str(tmp_path_factory.mktemp("mc") / "demo"), episodes=3, seed=5)


def test_scripted_expert_reaches_the_flag_every_episode(demo):
    from stride.data.demo import load_demo_dataset

    data = load_demo_dataset(demo)
    assert len(data.lengths) == 3 and (data.lengths < 150).all()
    assert data.columns["terminated"][np.cumsum(data.lengths) - 1].all()  # each episode ends at the flag
    assert set(np.unique(data.columns["action"]).tolist()) == {0, 2}


def test_r2d3_config_trains_on_the_scripted_demonstrations(demo, tmp_path):
    from stride.entry import serial_pipeline

    main, create = copy.deepcopy(zoo_config("mountaincar", "r2d3"))
    main["policy"]["collect"]["data_path"] = demo
    main["env"].update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1)
    main["policy"]["learn"].update(update_per_collect=2, batch_size=8)  # (2 demonstrations, 6 of the agent's)
    main["policy"]["collect"]["n_sample"] = 4
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=10_000, confirm_episode=0)
    out = serial_pipeline([main, create], seed=0, max_train_iter=6, exp_name=str(tmp_path / "run"), progress=False)
    assert out.result["train_iter"] == 6 and out.result["env_step"] > 0
