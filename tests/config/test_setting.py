"""stride.config.setting: defaults declared with their valid values, checked when a config is merged.

The issue's cases (lr <= 0 gave a traceback, batch_size=0 trained on NaN, step_timeout=-1
respawned workers forever, discount=1.5 was accepted) each end in one ConfigError line naming the
key, the value and what is valid; and every numeric key of every component has a declared range.
"""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
import textwrap

import pytest

from stride.config import Setting, compile_config, merge_config
from stride.config.compile import _model_defaults
from stride.utils.registry import import_components
from stride.config.config import declaration, deep_update
from stride.config.setting import REQUIRED, parse_interval, plain, settings_of
from stride.utils.errors import ConfigError
from stride.utils.registry import (
    BUFFER_REGISTRY, COLLECTOR_REGISTRY, ENV_MANAGER_REGISTRY, ENV_REGISTRY, MODEL_REGISTRY, POLICY_REGISTRY,
)
from stride.zoo.cartpole.config import cartpole_dqn_config as dqn_zoo
from stride.zoo.pendulum.config import pendulum_sac_config as sac_zoo
from tests.entry.stride_process import STRIDE


# ---- Setting -------------------------------------------------------------------------------------
def test_interval_bounds_open_closed_and_infinite():
    assert parse_interval("(0, 1]") == (0.0, 1.0, False, True)
    assert parse_interval("[1, inf)") == (1.0, math.inf, True, False)
    s = Setting(0.5, "(0, 1]")
    for ok in (1e-9, 0.5, 1, 1.0):
        s.check("k", ok)
    for bad in (0, 0.0, -1, 1.0000001, math.inf, math.nan, True, "0.5", [0.5]):
        with pytest.raises(ConfigError, match=r"config key 'k' must be a number in \(0, 1\], got"):
            s.check("k", bad)
    closed = Setting(math.inf, "[1, inf]")
    closed.check("k", math.inf)
    closed.check("k", 3)
    with pytest.raises(ConfigError):
        closed.check("k", 0.5)


def test_int_keys_take_integral_numbers_only():
    s = Setting(64, "[1, inf)")
    s.check("b", 1e5)  # an integral float, as written in configs
    for bad in (0, 1.5, -3, True):
        with pytest.raises(ConfigError, match=r"'b' must be an integer in \[1, inf\)"):
            s.check("b", bad)


def test_choices_name_the_valid_ones_and_the_closest():
    s = Setting("mse", ("mse", "huber"))
    with pytest.raises(ConfigError) as e:
        s.check("policy.learn.loss_type", "hubber")
    msg = str(e.value)
    assert msg == ("unknown value 'hubber' for config key 'policy.learn.loss_type' (did you mean 'huber'?); "
                   "valid choices: huber, mse")
    assert "\n" not in msg


def test_none_only_where_optional_and_lists_elementwise():
    Setting(None, "(0, inf)").check("g", None)
    Setting(0.2, "(0, inf)", optional=True).check("v", None)
    with pytest.raises(ConfigError, match="got None"):
        Setting(0.2, "(0, inf)").check("v", None)
    sizes = Setting([128, 64], "[1, inf)")
    sizes.check("h", (32,))
    for bad in ([], [0], [16, -1], 16, [1.5]):
        with pytest.raises(ConfigError, match="non-empty list of integers"):
            sizes.check("h", bad)


def test_a_declaration_that_contradicts_its_default_fails_at_once():
    with pytest.raises(ConfigError, match="<default>"):
        Setting(0, "(0, inf)")
    with pytest.raises(ValueError, match="bad interval"):
        Setting(1, "0..1")


def test_plain_override_of_a_setting_keeps_its_constraint():
    declared = {"learn": {"batch_size": Setting(64, "[1, inf)")}}
    sub = deep_update(copy.deepcopy(declared), {"learn": {"batch_size": 256}})
    assert isinstance(sub["learn"]["batch_size"], Setting) and sub["learn"]["batch_size"].default == 256
    with pytest.raises(ConfigError, match="'x.learn.batch_size' must be an integer"):
        merge_config(sub, {"learn": {"batch_size": 0}}, prefix="x.")
    assert merge_config(sub, {}) == {"learn": {"batch_size": 256}}
    with pytest.raises(ConfigError):  # an override outside the range is a bug of the declaring class
        deep_update(copy.deepcopy(declared), {"learn": {"batch_size": 0}})


# ---- the cases, through compile_config -----------------------------------------------------
def _compile(zoo, patch: dict):
    main = copy.deepcopy(zoo.main_config)
    deep_update(main, patch)
    return compile_config(main, create_cfg=copy.deepcopy(zoo.create_config), save_cfg=False)


@pytest.mark.parametrize("patch, key, shown", [
    ({"policy": {"learn": {"learning_rate": -1e-3}}}, "policy.learn.learning_rate", "-0.001"),
    ({"policy": {"learn": {"learning_rate": 0}}}, "policy.learn.learning_rate", "0"),
    ({"policy": {"learn": {"batch_size": 0}}}, "policy.learn.batch_size", "0"),
    ({"policy": {"discount_factor": 1.5}}, "policy.discount_factor", "1.5"),
    ({"policy": {"discount_factor": 0}}, "policy.discount_factor", "0"),
    ({"env": {"manager": {"step_timeout": -1}}}, "env.manager.step_timeout", "-1"),
    ({"env": {"manager": {"reset_timeout": 0}}}, "env.manager.reset_timeout", "0"),
    ({"env": {"manager": {"max_retry": 0}}}, "env.manager.max_retry", "0"),
    ({"policy": {"collect": {"n_sample": 0}}}, "policy.collect.n_sample", "0"),
    ({"policy": {"collect": {"n_sample": 2.5}}}, "policy.collect.n_sample", "2.5"),
    ({"policy": {"nstep": 0}}, "policy.nstep", "0"),
    ({"policy": {"other": {"eps": {"start": 1.5}}}}, "policy.other.eps.start", "1.5"),
    ({"policy": {"other": {"replay_buffer": {"replay_buffer_size": 0}}}}, "policy.other.replay_buffer.replay_buffer_size", "0"),
    ({"policy": {"eval": {"evaluator": {"eval_freq": 0}}}}, "policy.eval.evaluator.eval_freq", "0"),
    ({"policy": {"learn": {"learner": {"hook": {"save_ckpt_after_iter": -5}}}}},
     "policy.learn.learner.hook.save_ckpt_after_iter", "-5"),
    ({"policy": {"model": {"encoder_hidden_size_list": [128, 0]}}}, "policy.model.encoder_hidden_size_list", "[128, 0]"),
    ({"env": {"n_evaluator_episode": 0}}, "env.n_evaluator_episode", "0"),
    ({"env": {"collector_env_num": 0}}, "env.collector_env_num", "0"),
    ({"env": {"max_episode_steps": 0}}, "env.max_episode_steps", "0"),
    ({"policy": {"learn": {"learning_rate": float("nan")}}}, "policy.learn.learning_rate", "nan"),
])
def test_out_of_range_values_fail_compile_with_one_line(patch, key, shown):
    with pytest.raises(ConfigError) as e:
        _compile(dqn_zoo, patch)
    msg = str(e.value)
    assert f"'{key}'" in msg and f"got {shown}" in msg and "\n" not in msg


def test_continuous_policy_keys_are_checked_too():
    for patch, key in [({"policy": {"learn": {"learning_rate_q": -1}}}, "policy.learn.learning_rate_q"),
                       ({"policy": {"learn": {"target_theta": 2}}}, "policy.learn.target_theta"),
                       ({"policy": {"learn": {"alpha": 0}}}, "policy.learn.alpha"),
                       ({"policy": {"random_collect_size": -1}}, "policy.random_collect_size"),
                       ({"policy": {"model": {"action_space": "gaussian"}}}, "policy.model.action_space")]:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            _compile(sac_zoo, patch)


def test_valid_values_still_compile():
    cfg = _compile(dqn_zoo, {"policy": {"learn": {"learning_rate": 3e-4, "batch_size": 1e2},
                                        "discount_factor": 1.0}, "env": {"manager": {"step_timeout": 30}}})
    assert cfg.policy.learn.learning_rate == 3e-4 and cfg.policy.discount_factor == 1.0


# ---- declarations of every component --------------------------------------------------------------
def _declarations() -> dict:
    import_components()
    found = {}
    for reg, label in ((POLICY_REGISTRY, "policy"), (BUFFER_REGISTRY, "buffer"), (ENV_MANAGER_REGISTRY, "manager"),
                       (COLLECTOR_REGISTRY, "collector"), (ENV_REGISTRY, "env")):
        for name in reg.names():
            found[f"{label}:{name}"] = declaration(reg.get(name))
    for name in MODEL_REGISTRY.names():
        found[f"model:{name}"] = _model_defaults(MODEL_REGISTRY.get(name))
    from stride.worker import BaseLearner, BaseSerialEvaluator

    found["learner"] = BaseLearner.declared_config()
    found["evaluator"] = BaseSerialEvaluator.declared_config()
    return found


# numeric keys for which every number is valid (the rest must declare their range); a policy's
# other.replay_buffer values override the buffer's own declaration, which holds the ranges
UNCONSTRAINED = ("stop_value", "noise_range.min", "noise_range.max", "target_entropy")


def _numeric_leaves(tree, prefix=""):
    for k, v in tree.items():
        if isinstance(v, dict):
            yield from _numeric_leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def test_every_numeric_key_declares_its_valid_values():
    missing = []
    for owner, tree in _declarations().items():
        for key, leaf in _numeric_leaves(tree):
            if key.endswith(UNCONSTRAINED) or key.startswith("other.replay_buffer.") or isinstance(leaf, Setting):
                continue
            if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
                missing.append(f"{owner} {key}={leaf!r}")
    assert not missing, "numeric config keys without a declared range: " + "; ".join(missing)


def test_default_configs_are_plain_values():
    import_components()
    for reg in (POLICY_REGISTRY, BUFFER_REGISTRY, ENV_MANAGER_REGISTRY, COLLECTOR_REGISTRY, ENV_REGISTRY):
        for name in reg.names():
            cfg = reg.get(name).default_config()
            assert not settings_of(cfg), name
            assert not any(isinstance(v, Setting) for _, v in _numeric_leaves(cfg))
    assert plain({"a": Setting(1, "[0, 1]"), "b": {"c": Setting(REQUIRED, kind=int)}}) == {"a": 1, "b": {"c": REQUIRED}}


# ---- the command -------------------------------------------------------------------------------------
def test_command_refuses_a_bad_value_with_one_line(tmp_path):
    cfg = tmp_path / "bad_lr_config.py"
    cfg.write_text(textwrap.dedent("""
        import copy
        from stride.zoo.cartpole.config.cartpole_dqn_config import main_config as m, create_config
        main_config = copy.deepcopy(m)
        main_config["policy"]["learn"]["learning_rate"] = -0.001
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([*STRIDE, "-m", "serial", "-c", str(cfg), "-s", "0"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == ["stride: error: config key 'policy.learn.learning_rate' must be a number in (0, inf) or a schedule dict "
                     "(type: constant, cosine, exp, linear, piecewise), got -0.001"]
    assert "Traceback" not in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad_lr_config.py"]  # nothing written
