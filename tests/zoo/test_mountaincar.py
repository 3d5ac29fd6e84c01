"""mountaincar: the zoo finds its R2D2 and R2D3 configs (R2D3's = R2D2's + the demonstrations) and the
scripted expert's action rule. The expert's dataset (every episode at the flag) and R2D3's run on it
are docs/pipelines/demonstrations.md's commands, checked by tests/docs; learning is benchmarks/r2d3's
job (R2D2 alone needs far more than a test's budget)."""

from __future__ import annotations

import numpy as np

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
