"""stride.rl_utils.schedule: every schedule type against hand-computed values, the old epsilon and
LambdaLR forms bit for bit, one-line errors, config merging (``Scheduled``) and the counters."""

from __future__ import annotations

import math

import pytest
import torch

from stride.config import merge_config
from stride.rl_utils import Schedule, Scheduled, Schedules, get_epsilon_greedy_fn, parse_schedule
from stride.utils.errors import ConfigError


def _values(spec, steps, unit="train_iter"):
    f = parse_schedule("k", spec, unit)
    return [f(s) for s in steps]


# ---- values --------------------------------------------------------------------------------------
def test_number_is_constant():
    assert _values(0.5, [0, 10, 10 ** 9]) == [0.5, 0.5, 0.5]
    assert _values(dict(type="constant", value=2), [0, 7]) == [2.0, 2.0]


def test_linear_clamps_at_its_end_both_ways():
    assert _values(dict(type="linear", start=1.0, end=0.1, steps=100), [0, 50, 100, 1000]) == pytest.approx([1.0, 0.55, 0.1, 0.1])
    assert _values(dict(type="linear", start=0.0, end=1.0, steps=10), [0, 5, 10, 50]) == pytest.approx([0.0, 0.5, 1.0, 1.0])
    # epsilon's older spelling of the length
    assert _values(dict(type="linear", start=1.0, end=0.1, decay=100), [50]) == pytest.approx([0.55])


def test_exp():
    f = parse_schedule("k", dict(type="exp", start=0.95, end=0.1, decay=10000))
    assert f(0) == pytest.approx(0.95)
    assert f(10000) == pytest.approx(0.85 * 0.36787944 + 0.1)  # 0.41269752
    assert f(5000) == pytest.approx(0.85 * 0.60653066 + 0.1)
    assert f(10 ** 7) == pytest.approx(0.1)


def test_cosine_with_and_without_warmup():
    # 0.5 * (1 + cos(pi / 4)) = 0.85355339
    assert _values(dict(type="cosine", start=1.0, end=0.0, steps=100), [0, 25, 50, 100, 200]) == pytest.approx(
        [1.0, 0.85355339, 0.5, 0.0, 0.0])
    # warmup 10: 0 -> 2 linearly, then 2 -> 0.5 over 100 steps (mid-way: 0.5 + 1.5 * 0.5 = 1.25)
    assert _values(dict(type="cosine", start=2.0, end=0.5, steps=100, warmup=10), [0, 5, 10, 60, 110, 500]) == pytest.approx(
        [0.0, 1.0, 2.0, 1.25, 0.5, 0.5])


def test_piecewise_interpolates_and_holds_outside():
    spec = dict(type="piecewise", points=[[100, 0.3], [200, 0.2], [400, 0.1]])
    assert _values(spec, [0, 100, 150, 200, 300, 400, 10 ** 6]) == pytest.approx([0.3, 0.3, 0.25, 0.2, 0.15, 0.1, 0.1])
    assert _values(dict(type="piecewise", points=[[0, 5.0]]), [0, 99]) == [5.0, 5.0]


def test_scale_multiplies():
    assert _values(dict(type="linear", start=1.0, end=0.0, steps=4, scale=3e-4), [0, 2, 4, 9]) == pytest.approx(
        [3e-4, 1.5e-4, 0.0, 0.0])


# ---- the forms it replaces, bit for bit ------------------------------------------------------------
@pytest.mark.parametrize("start,end,decay", [(1.0, 0.1, 100000), (1.0, 0.01, 1000000), (0.1, 0.1, 1), (0.0, 1.0, 37)])
def test_linear_equals_the_old_epsilon_function_exactly(start, end, decay):
    old = (lambda s: max(end, start - (start - end) * s / decay)) if start >= end else \
        (lambda s: min(end, start + (end - start) * s / decay))
    f = get_epsilon_greedy_fn(start, end, decay, "linear")
    assert all(f(s) == old(s) for s in range(0, 3 * decay + 7, max(1, decay // 997)))


def test_exp_equals_the_old_epsilon_function_exactly():
    f = get_epsilon_greedy_fn(0.95, 0.1, 10000, "exp")
    assert all(f(s) == (0.95 - 0.1) * math.exp(-s / 10000) + 0.1 for s in range(0, 100000, 7))


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`")
@pytest.mark.parametrize("lr,n", [(1e-3, 400), (2.5e-4, 1953), (3e-4, 7)])
def test_scaled_linear_equals_ppos_old_lambdalr_exactly(lr, n):
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: max(1.0 - i / n, 0.0))
    f = Schedule("linear", start=1.0, end=0.0, steps=n, scale=lr)
    for i in range(n + 5):
        assert f(i) == opt.param_groups[0]["lr"], i
        sched.step()  # (the learning rates alone: no optimizer step needed)


# ---- errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,words", [
    (dict(type="cos", start=1, end=0, steps=10), ["unknown schedule type 'cos'", "did you mean 'cosine'",
                                                  "valid choices: constant, cosine, exp, linear, piecewise"]),
    (dict(start=1, end=0, steps=10), ["unknown schedule type None", "valid choices"]),
    (dict(type="cosine", start=1, end=0), ["needs 'steps'", "valid keys: type, start, end, steps, warmup, unit, scale"]),
    (dict(type="linear", start=1, end=0, step=10), ["has no key 'step'", "did you mean 'steps'"]),
    (dict(type="linear", start=1, end=0, steps=10, unit="episode"), ["unknown schedule unit 'episode'",
                                                                      "valid choices: env_step, train_iter"]),
    (dict(type="linear", start=1, end=0, steps=0), ["'steps' must be > 0, got 0"]),
    (dict(type="linear", start="1", end=0, steps=5), ["'start' must be a finite number, got '1'"]),
    (dict(type="cosine", start=1, end=0, steps=5, warmup=2.5), ["'warmup' must be an integer >= 0, got 2.5"]),
    (dict(type="piecewise", points=[[0, 1], [0, 2]]), ["steps of 'points' must increase"]),
    (dict(type="piecewise", points=[1, 2]), ["list of [step, value] pairs, got [1, 2]"]),
    ("fast", ["must be a number or a schedule dict", "got 'fast'"]),
    (True, ["must be a number or a schedule dict", "got True"]),
])
def test_bad_specs_are_one_line_config_errors(spec, words):
    with pytest.raises(ConfigError) as e:
        parse_schedule("learn.learning_rate", spec)
    msg = str(e.value)
    assert "'learn.learning_rate'" in msg and "\n" not in msg
    for w in words:
        assert w in msg, msg


# ---- config: Scheduled ---------------------------------------------------------------------------
DECLARED = dict(
    learn=dict(learning_rate=Scheduled(1e-3, "(0, inf)"), clip_ratio=Scheduled(0.2, "(0, 1)")),
    other=dict(eps=Scheduled(dict(type="exp", start=0.95, end=0.1, decay=10000), "[0, 1]", unit="env_step")),
)


def test_merge_takes_numbers_and_schedules_and_bounds_their_values():
    lr = dict(type="linear", start=1e-3, end=0.0, steps=100)  # decays onto the open bound 0: allowed
    cfg = merge_config(DECLARED, {"learn": {"learning_rate": lr, "clip_ratio": 0.1}})
    assert cfg.learn.learning_rate == lr and cfg.learn.clip_ratio == 0.1
    with pytest.raises(ConfigError, match=r"'learn.clip_ratio.end' must be a schedule value in \[0, 1\], got 1.5"):
        merge_config(DECLARED, {"learn": {"clip_ratio": dict(type="linear", start=0.2, end=1.5, steps=10)}})
    with pytest.raises(ConfigError, match=r"'learn.learning_rate' must be a number in \(0, inf\) or a schedule dict"):
        merge_config(DECLARED, {"learn": {"learning_rate": -1.0}})
    with pytest.raises(ConfigError, match="did you mean 'cosine'"):
        merge_config(DECLARED, {"learn": {"learning_rate": dict(type="cosin", start=1, end=0, steps=1)}})


def test_a_dict_over_a_dict_default_of_its_type_keeps_the_other_keys():
    cfg = merge_config(DECLARED, {"other": {"eps": {"decay": 500}}})
    assert cfg.other.eps == dict(type="exp", start=0.95, end=0.1, decay=500)
    linear = dict(type="linear", start=1.0, end=0.05, steps=1000)  # another type: taken as given
    assert merge_config(DECLARED, {"other": {"eps": linear}}).other.eps == linear
    assert merge_config(DECLARED, {"other": {"eps": 0.05}}).other.eps == 0.05


# ---- counters --------------------------------------------------------------------------------------
def test_schedules_read_their_counter_and_save_it():
    cfg = merge_config(DECLARED, {"learn": {"learning_rate": dict(type="linear", start=1.0, end=0.0, steps=10)}})
    s = Schedules.from_config(DECLARED, cfg)
    assert s.keys() == ["learn.clip_ratio", "learn.learning_rate", "other.eps"]
    s.counters["train_iter"], s.counters["env_step"] = 5, 10000
    assert s.value("learn.learning_rate") == 0.5 and s.value("learn.clip_ratio") == 0.2
    assert s.value("other.eps") == pytest.approx(0.85 * math.exp(-1) + 0.1)  # env steps, the key's unit
    assert s.value("other.eps", env_step=0) == pytest.approx(0.95) and s.value("learn.learning_rate", train_iter=8) == pytest.approx(0.2)
    t = Schedules.from_config(DECLARED, cfg)
    t.load_state_dict(s.state_dict())
    assert t.value("learn.learning_rate") == 0.5
    with pytest.raises(KeyError, match="'learn.batch_size' is not a scheduled key"):
        s.value("learn.batch_size")


def test_a_schedule_may_name_its_counter():
    s = parse_schedule("other.eps", dict(type="linear", start=1.0, end=0.0, steps=4, unit="train_iter"), "env_step")
    assert s.unit == "train_iter"
    assert parse_schedule("other.eps", 0.1, "env_step").unit == "env_step"


def test_a_schedule_built_in_code_is_checked_too():
    with pytest.raises(ConfigError, match="type one of constant, cosine, exp, linear, piecewise"):
        Schedule("lin", start=1.0)
    with pytest.raises(ConfigError, match="points given for"):
        Schedule("piecewise")
    with pytest.raises(ConfigError, match="unit one of env_step, train_iter"):
        Schedule("constant", start=1.0, unit="episode")
