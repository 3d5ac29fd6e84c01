"""VectorEvalMonitor quotas and BaseSerialEvaluator (exact episode count, stop flag, best checkpoint)."""

from __future__ import annotations

import numpy as np
import pytest

from stride.utils.errors import ConfigError
from stride.worker import BaseSerialEvaluator, VectorEvalMonitor
from stride.envs import BaseEnvManager
from .stride_worker_fakes import ChainEnv, make_manager, make_policy


@pytest.fixture
def managers():
    made = []

    def _make(n, **kw):
        m = make_manager(n, **kw)
        made.append(m)
        return m

    yield _make
    for m in made:
        m.close()


# ---- VectorEvalMonitor ------------------------------------------------------------------------
def _fill(monitor: VectorEvalMonitor, env_num: int) -> list:
    accepted = []
    for i in range(env_num):
        k = 0
        while monitor.needs_more(i):
            monitor.update_reward(i, 10 * i + k)
            k += 1
        monitor.update_reward(i, -1.0)  # beyond the quota: ignored
        accepted.append(k)
    return accepted


@pytest.mark.parametrize("env_num,n,quota", [(5, 12, [3, 3, 2, 2, 2]), (4, 4, [1, 1, 1, 1]), (3, 10, [4, 3, 3]),
                                             (2, 7, [4, 3])])
def test_monitor_quotas(env_num, n, quota):
    m = VectorEvalMonitor(env_num, n)
    assert not m.is_finished() and m.get_current_episode() == 0
    assert _fill(m, env_num) == quota
    assert m.is_finished() and m.get_current_episode() == n
    returns = m.get_episode_return()
    assert len(returns) == n and -1.0 not in returns
    assert returns == [10 * i + k for i in range(env_num) for k in range(quota[i])]  # env by env


def test_monitor_bad_n_episode():
    with pytest.raises(ConfigError, match="n_episode"):
        VectorEvalMonitor(3, 0)


def test_monitor_update_info():
    m = VectorEvalMonitor(2, 2)
    m.update_info(1, {"x": 1})
    assert m._infos[1] == [{"x": 1}]


# ---- BaseSerialEvaluator ----------------------------------------------------------------------
def _final_reward(i, ep, t):
    # return of episode `ep` of env i is 100*i + ep (one reward at the last step; episodes are i+1 long)
    return float(100 * i + ep) if t == i else 0.0


def make_evaluator(managers, reward_fn=_final_reward, **cfg):
    env = managers(5, length=lambda i, ep: i + 1, reward_fn=reward_fn)
    policy = make_policy()
    return BaseSerialEvaluator({"n_episode": 12, **cfg}, env, policy.eval_mode), env


def test_eval_exact_n_episode_balanced_over_envs(managers):
    ev, env = make_evaluator(managers)
    stop, returns = ev.eval(train_iter=0)
    # env 0 finishes an episode every step, env 4 every 5 steps; quotas 3,3,2,2,2 keep it balanced
    assert returns == [0, 1, 2, 100, 101, 102, 200, 201, 300, 301, 400, 401]
    assert stop is False
    assert ev.last_eval_return == pytest.approx(np.mean(returns))
    # envs with a full quota are not stepped further (env 0 ran exactly its 3 one-step episodes)
    assert env._envs[0].step_calls == 3 and env._envs[4].step_calls == 10


def test_eval_n_episode_argument(managers):
    ev, _ = make_evaluator(managers)
    _, returns = ev.eval(n_episode=7)
    assert len(returns) == 7 and [r // 100 for r in returns] == [0, 0, 1, 1, 2, 3, 4]


@pytest.mark.parametrize("stop_value,train_iter,expected", [(100.0, 5, True), (100.0, 0, False),
                                                            (175.75, 1, True), (176.0, 5, False)])
def test_stop_flag(managers, stop_value, train_iter, expected):
    ev, _ = make_evaluator(managers, stop_value=stop_value)  # mean return of the first evaluation is 175.75
    stop, returns = ev.eval(train_iter=train_iter)
    assert np.mean(returns) == pytest.approx(175.75)
    assert stop is expected


def test_best_checkpoint_callback_only_on_new_best(managers):
    ev, _ = make_evaluator(managers, reward_fn=lambda i, ep, t: 1.0)  # every evaluation has the same mean
    calls = []
    ev.eval(calls.append, train_iter=0)
    assert calls == ["ckpt_best.pth.tar"]
    ev.eval(calls.append, train_iter=10)
    assert calls == ["ckpt_best.pth.tar"]  # not better: not saved again


def test_best_checkpoint_callback_on_improvement(managers):
    ev, _ = make_evaluator(managers)  # returns grow with the episode index: each evaluation is better
    calls = []
    ev.eval(calls.append, train_iter=0)
    ev.eval(calls.append, train_iter=1)
    assert calls == ["ckpt_best.pth.tar", "ckpt_best.pth.tar"]
    ev.eval(None, train_iter=2)  # no callback given: fine


def test_should_eval(managers):
    ev, _ = make_evaluator(managers, eval_freq=10)
    assert [ev.should_eval(i) for i in (0, 0, 5, 9, 10, 10, 15, 19, 20, 35)] == [
        True, False, False, False, True, False, False, False, True, True]
    ev2, _ = make_evaluator(managers, eval_freq=10)
    assert ev2.should_eval(7)  # the first call always evaluates


def test_evaluator_state_dict(managers):
    const = lambda i, ep, t: 1.0  # noqa: E731  every evaluation has the same mean
    ev, _ = make_evaluator(managers, reward_fn=const, eval_freq=10)
    ev.should_eval(30)
    ev.eval(train_iter=30)
    ev2, _ = make_evaluator(managers, reward_fn=const, eval_freq=10)
    ev2.load_state_dict(ev.state_dict())
    assert not ev2.should_eval(35) and ev2.should_eval(40)
    calls = []
    ev2.eval(calls.append, train_iter=40)  # same mean as the restored best: no new best
    assert calls == []
    ev3, _ = make_evaluator(managers, reward_fn=const, eval_freq=10)
    ev3.eval(calls.append, train_iter=40)  # without the restored state it is a new best
    assert calls == ["ckpt_best.pth.tar"]


def test_evaluator_logs_to_tensorboard(managers):
    class TB:
        def __init__(self):
            self.tags = {}

        def add_scalar(self, tag, value, step):
            self.tags[tag] = (value, step)

    tb = TB()
    env = managers(2, length=3)
    ev = BaseSerialEvaluator({"n_episode": 4}, env, make_policy().eval_mode, tb_logger=tb)
    ev.eval(train_iter=7, envstep=70)
    assert tb.tags["evaluator_iter/reward_mean"] == (pytest.approx(6.0), 7)
    assert tb.tags["evaluator_step/reward_mean"] == (pytest.approx(6.0), 70)
    assert tb.tags["evaluator_iter/episode_count"][0] == 4


def test_evaluator_unknown_config_key(managers):
    with pytest.raises(ConfigError, match="eval_frq"):
        BaseSerialEvaluator({"eval_frq": 3}, managers(1), make_policy().eval_mode)


def test_should_eval_by_envstep(managers):
    ev, _ = make_evaluator(managers, eval_freq_envstep=1000)
    steps = (0, 500, 999, 1000, 1500, 2600, 2700, 3000, 3000)
    assert [ev.should_eval(i, envstep=s) for i, s in enumerate(steps)] == [
        True, False, False, True, False, True, False, True, False]
    ev2, _ = make_evaluator(managers, eval_freq_envstep=1000)
    ev2.load_state_dict(ev.state_dict())  # resumed: the marks carry over
    assert not ev2.should_eval(9, envstep=3500) and ev2.should_eval(10, envstep=4000)


def _falling(i, ep, t):
    # every env's k-th episode returns 1000 - 100 k (one reward at the last step; episodes are i+1 long)
    return 1000.0 - 100 * ep if t == i else 0.0


@pytest.mark.parametrize("stop_value,confirm,stop,confirmed", [
    (950.0, 0, True, None),     # no confirmation asked: the screen alone stops
    (950.0, 10, False, 850.0),  # the screen passes, the 10 episodes that follow do not
    (800.0, 10, True, 850.0),   # both pass
    (1001.0, 10, False, None),  # the screen fails: no confirmation is run
])
def test_confirmation_of_a_passing_screen(managers, stop_value, confirm, stop, confirmed):
    ev, env = make_evaluator(managers, reward_fn=_falling, n_episode=5, stop_value=stop_value, confirm_episode=confirm)
    got, returns = ev.eval(train_iter=3)
    assert got is stop and ev.last_eval_return == 1000.0 and ev.last_confirm_return == confirmed
    if confirmed is not None:  # the confirmation's own episodes: the next two of every env, none of the screen's
        assert sorted(returns) == [800.0] * 5 + [900.0] * 5


@pytest.mark.parametrize("std_errors,stop", [
    (0.0, True),   # the bare mean 850 reaches 800
    (2.0, True),   # 850 - 2 x 50/3 = 816.7
    (4.0, False),  # 850 - 4 x 50/3 = 783.3
])
def test_the_confirmation_can_ask_for_a_margin_of_standard_errors(managers, std_errors, stop):
    # the confirmation's returns are 800 x 5 and 900 x 5: sample std 50 sqrt(10/9), standard error 50/3
    ev, _ = make_evaluator(managers, reward_fn=_falling, n_episode=5, stop_value=800.0, confirm_episode=10,
                           confirm_std_errors=std_errors)
    got, returns = ev.eval(train_iter=3)
    assert got is stop and ev.last_confirm_return == 850.0
    assert ev.confirm_lower_bound(returns) == pytest.approx(850.0 - std_errors * 50.0 / 3.0)


def test_an_evaluator_without_env_or_policy_says_so():
    from stride.utils.errors import StrideError
    from stride.worker import BaseSerialEvaluator

    with pytest.raises(StrideError, match="needs an env manager and a policy"):
        BaseSerialEvaluator({}).eval(n_episode=1)


class _SuccessChain(ChainEnv):
    """ChainEnv whose episodes end with ``info['is_success']``: every third episode of each env succeeds."""

    def step(self, action):
        ts = super().step(action)
        if ts.done:
            ts.info["is_success"] = np.float32(self.episode % 3 == 0)  # Gymnasium-Robotics gives a float32
        return ts


def test_success_metric_scores_the_last_steps_is_success():
    env = BaseEnvManager([lambda i=i: _SuccessChain(env_idx=i, length=2) for i in range(2)], {"retry_waiting_time": 0.0})
    try:
        ev = BaseSerialEvaluator({"n_episode": 6, "metric": "success", "stop_value": 0.3}, env, make_policy().eval_mode)
        stop, scores = ev.eval(train_iter=1)
        # each env runs episodes 0, 1, 2: only episode 0 succeeds (returns would be 3.0 each)
        assert scores == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
        assert ev.last_eval_return == pytest.approx(1 / 3) and stop is True
    finally:
        env.close()


def test_success_metric_without_is_success_names_the_metric_and_the_info_keys(managers):
    ev, _ = make_evaluator(managers, metric="success")
    with pytest.raises(ConfigError, match=r"metric='success' needs info\['is_success'\].*valid metrics: return, success"):
        ev.eval(train_iter=1)
    with pytest.raises(ConfigError, match="metric"):
        make_evaluator(managers, metric="win_rate")


# ---- return_best: the best evaluation, ranked by its confirmation -----------------------------
def test_return_best_confirms_a_new_best_screen_and_ranks_by_the_confirmation(managers):
    ev, _ = make_evaluator(managers, reward_fn=_falling, n_episode=5, confirm_episode=10, return_best=True)
    saved = []
    save = lambda name: saved.append(name) or f"/exp/ckpt/{name}"  # noqa: E731  a learner returns the path
    stop, returns = ev.eval(save, train_iter=3, envstep=30)
    # the screen (1000 x 5) beats no best yet: confirmed on the next two episodes of every env (900, 800)
    assert not stop and ev.last_eval_return == 1000.0 and ev.last_confirm_return == 850.0
    assert sorted(returns) == [800.0] * 5 + [900.0] * 5
    assert saved == ["ckpt_best.pth.tar"] and ev.return_best
    assert ev.best is not None and (ev.best.score, ev.best.train_iter, ev.best.envstep) == (850.0, 3, 30)
    assert ev.best.checkpoint == "/exp/ckpt/ckpt_best.pth.tar"
    ev.eval(save, train_iter=4, envstep=40)  # a later screen (600 x 5): under the best 850, no confirmation, no save
    assert ev.last_eval_return == 600.0 and ev.last_confirm_return is None and saved == ["ckpt_best.pth.tar"]
    assert ev.best.train_iter == 3


def test_a_lucky_screen_whose_confirmation_falls_short_is_not_the_best(managers):
    # env i's k-th episode returns 1000 for k = 0 and k >= 3 but 0 for k = 1, 2: a screen (k = 0) that
    # the confirmation (k = 1, 2) does not hold; the next screen (later episodes) equals it and holds
    lucky = lambda i, ep, t: (0.0 if ep in (1, 2) else 1000.0) if t == i else 0.0  # noqa: E731
    ev, _ = make_evaluator(managers, reward_fn=lucky, n_episode=5, confirm_episode=10, return_best=True)
    saved = []
    ev.eval(saved.append, train_iter=1)
    assert ev.last_confirm_return == 0.0 and ev.best is not None and ev.best.score == 0.0 and ev.best.train_iter == 1
    ev.eval(saved.append, train_iter=2)
    assert ev.last_confirm_return == 1000.0 and ev.best.score == 1000.0 and ev.best.train_iter == 2
    assert saved == ["ckpt_best.pth.tar"] * 2


def test_without_return_best_or_outside_a_run_no_screen_is_confirmed_for_the_best(managers):
    ev, _ = make_evaluator(managers, reward_fn=_falling, n_episode=5, confirm_episode=10)
    saved = []
    ev.eval(saved.append, train_iter=1)
    assert ev.last_confirm_return is None and ev.best is not None and ev.best.score == 1000.0 and not ev.return_best
    assert ev.best.checkpoint is None  # the callback returned no path
    ev2, _ = make_evaluator(managers, reward_fn=_falling, n_episode=5, confirm_episode=10, return_best=True)
    _, returns = ev2.eval(n_episode=5)  # `stride -m eval`: no checkpoint to keep, no confirmation
    assert len(returns) == 5 and ev2.last_confirm_return is None


def test_the_best_evaluation_survives_a_checkpoint(managers):
    ev, _ = make_evaluator(managers, reward_fn=_falling, n_episode=5, confirm_episode=10, return_best=True)
    ev.eval(lambda name: f"/exp/{name}", train_iter=3, envstep=30)
    ev2, _ = make_evaluator(managers, reward_fn=_falling, n_episode=5, confirm_episode=10, return_best=True)
    ev2.load_state_dict(ev.state_dict())
    assert ev2.best == ev.best
    old = {k: v for k, v in ev.state_dict().items() if k != "best"}  # a checkpoint from before return_best
    ev3, _ = make_evaluator(managers)
    ev3.load_state_dict(old)
    assert ev3.best is None
