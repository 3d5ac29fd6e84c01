"""The parallel pipeline's replay ratio (``ReplayRatio``): counts only, no Ray, no clock."""

from __future__ import annotations

import copy
import random

import pytest

from stride.config import compile_config
from stride.entry.parallel.ratio import ReplayRatio, compile_ratio
from stride.entry.parallel.system import compile_system_config
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par


def _cfg(tmp_path, **policy):
    main = copy.deepcopy(par.main_config)
    main["policy"].update(policy)
    return compile_config(main, create_cfg=copy.deepcopy(par.create_config), seed=0, exp_name=str(tmp_path / "exp"),
                          save_cfg=False)


def test_the_default_is_the_serial_ratio_from_its_first_batch(tmp_path):
    r = compile_ratio(_cfg(tmp_path), compile_system_config(par.system_config))
    # 4 gradient steps per collect of 8 samples; the first step once the replay holds a batch of 64
    assert (r.ratio, r.learn_start, r.min_call, r.max_call) == (0.5, 64, 8, 8)  # calls of one collect per collector
    assert r.tolerance == 2 * (2 * 8 + 8 / 0.5)
    warm = compile_ratio(_cfg(tmp_path, random_collect_size=1000), compile_system_config(
        dict(par.system_config, replay_ratio=0.25, replay_tolerance=100)))
    assert (warm.ratio, warm.learn_start, warm.tolerance) == (0.25, 1000, 100)
    assert compile_ratio(_cfg(tmp_path), compile_system_config(dict(par.system_config, learn_start=10))).learn_start == 10


def test_bad_ratios_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="replay_tolerance=3 .* valid choices: >= 4"):
        compile_ratio(_cfg(tmp_path), compile_system_config(dict(par.system_config, replay_tolerance=3)))
    with pytest.raises(ConfigError, match="replay_ratio"):
        compile_system_config(dict(par.system_config, replay_ratio=0))
    cfg = _cfg(tmp_path)
    cfg.policy.collect.pop("n_sample")  # an episode collector's config: no collect size
    with pytest.raises(ConfigError, match="replay_ratio=None cannot be derived"):
        compile_ratio(cfg, compile_system_config(par.system_config))


def test_collectors_are_held_when_too_far_ahead_and_the_learner_when_ahead():
    r = ReplayRatio(0.5, learn_start=64, tolerance=64, collect_steps=8, min_call=4, max_call=8)
    for _ in range(8):  # the warm-up: collectors free, the learner waits
        assert r.may_collect(1) and r.train_steps() == 0
        r.received(8)
    assert r.train_steps() == 0  # 64 env steps: learning starts, no step owed yet
    while r.may_collect(0):
        r.received(8)
    # held at learn_start + tolerance env steps with no gradient step taken
    assert r.limiter.inserts == 128 and not r.may_collect(0)
    assert not r.may_collect(0) and r.train_steps() == 8  # 32 steps owed, calls of at most 8
    r.trained(8)
    assert r.may_collect(1) and not r.may_collect(2)  # 8 steps took 16 env steps: room for two collects, not three
    r.trained(r.train_steps())
    r.trained(r.train_steps())
    r.trained(r.train_steps())
    assert r.limiter.samples == 32 and r.train_steps() == 0  # caught up: the learner waits
    r.received(6)
    assert r.train_steps() == 0  # 3 steps owed < a call's 4
    r.received(2)
    assert r.train_steps() == 4
    assert r.achieved() == 32 / 72


def test_a_run_of_uneven_arrivals_holds_the_ratio_within_its_tolerance():
    rng = random.Random(0)
    r = ReplayRatio(0.25, learn_start=200, tolerance=96, collect_steps=16, min_call=4, max_call=8)
    in_flight = 0
    for _ in range(5000):
        if rng.random() < 0.5 and (in_flight < 2 and r.may_collect(in_flight)):
            in_flight += 1
        elif rng.random() < 0.5 and in_flight:
            in_flight -= 1
            r.received(rng.choice([12, 16, 20]))
        elif r.train_steps():
            r.trained(r.train_steps())
        owed = 0.25 * (r.limiter.inserts - 200)
        assert r.limiter.samples <= max(owed, 0)  # the learner is never ahead
        assert r.limiter.inserts - 200 - r.limiter.samples / 0.25 <= 96 + 2 * 20  # collectors: tolerance + in flight
    assert r.limiter.inserts > 20000 and abs(r.achieved() / 0.25 - 1) < 0.01


def test_restore_goes_on_from_a_runs_counters():
    r = ReplayRatio(0.5, learn_start=64, tolerance=64, collect_steps=8, min_call=4, max_call=8)
    r.restore(1064, 480)
    assert r.train_steps() == 8 and r.achieved() == 0.48
