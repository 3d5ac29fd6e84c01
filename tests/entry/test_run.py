"""stride.entry.run: the run core's public callbacks -- a callback that logs every step, one that
stops the run cleanly (checkpoint, result.json, resumable to what an uninterrupted run gives), a
learner hook given through the same ``callbacks=`` -- in the serial, offline and league entries."""

from __future__ import annotations

import copy
import csv
import json
import os
import signal
from typing import Any, Dict, List, Mapping, Optional

import pytest
import torch

from stride.config import Config
from stride.entry import serial_pipeline, serial_pipeline_onpolicy
from stride.entry.run import Run, RunCallback, StopRun
from stride.envs import GymnasiumEnv
from stride.utils.registry import ENV_REGISTRY
from stride.worker import LearnerHook
from stride.worker.learner.learner import read_checkpoint
from stride.zoo.cartpole.config import cartpole_dqn_config, cartpole_ppo_config

pytestmark = pytest.mark.timeout(120)


def _dqn(eval_freq: int = 10**9) -> List[Dict[str, Any]]:
    main = copy.deepcopy(cartpole_dqn_config.main_config)
    main["env"].update(stop_value=1e9, collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2)  # cheap, never stops
    main["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=eval_freq, confirm_episode=0))
    main["policy"]["learn"]["learner"] = dict(hook=dict(save_ckpt_after_iter=10_000))
    return [main, copy.deepcopy(cartpole_dqn_config.create_config)]


class Log(RunCallback):
    """Records every call."""

    def __init__(self) -> None:
        self.calls: List[str] = []
        self.collects: List[int] = []
        self.trains: List[int] = []
        self.logs: List[Dict[str, object]] = []
        self.rows: List[Mapping[str, object]] = []
        self.exp: Optional[str] = None
        self.result: Optional[Mapping[str, object]] = None

    def on_run_start(self, run: Run) -> None:
        self.calls.append("start")
        self.exp = run.exp

    def on_collect(self, envstep: int, train_iter: int) -> None:
        self.collects.append(envstep)

    def on_train(self, train_iter: int, log: Mapping[str, object]) -> None:
        self.trains.append(train_iter)
        self.logs.append(dict(log))

    def on_eval(self, row: Mapping[str, object]) -> None:
        self.rows.append(dict(row))

    def on_run_end(self, run: Run, result: Mapping[str, object]) -> None:
        self.calls.append("end")
        self.result = result


def test_a_logging_callback_sees_every_collect_train_step_and_evaluation(tmp_path):
    log = Log()
    policy = serial_pipeline(_dqn(eval_freq=100), seed=0, max_env_step=240, exp_name=str(tmp_path / "run"),
                             progress=False, callbacks=[log])
    result = policy.result
    assert log.calls == ["start", "end"] and log.exp == result["exp_dir"]
    assert log.collects == sorted(log.collects) and log.collects[-1] == result["env_step"]
    assert log.trains == list(range(1, result["train_iter"] + 1))  # once per learner.train, in order
    assert all({"cur_lr", "total_loss"} <= set(step) for step in log.logs)  # the policy's log of that step
    assert len(log.rows) >= 2 and all(row["stop"] is False for row in log.rows)
    with open(tmp_path / "run" / "progress.csv") as f:
        assert len(f.read().splitlines()) == len(log.rows) + 1  # the rows progress.csv got
    assert log.result == json.loads((tmp_path / "run" / "result.json").read_text())
    assert "stopped_by" not in result


class StopAt(RunCallback):
    def __init__(self, train_iter: int) -> None:
        self.train_iter = train_iter

    def on_train(self, train_iter: int, log: Mapping[str, object]) -> Optional[bool]:
        return train_iter >= self.train_iter


def test_a_callback_stops_the_run_with_a_checkpoint_and_resume_continues_exactly(tmp_path):
    whole = serial_pipeline(_dqn(), seed=1, max_train_iter=120, exp_name=str(tmp_path / "whole"), progress=False)
    cut = serial_pipeline(_dqn(), seed=1, max_train_iter=120, exp_name=str(tmp_path / "cut"), progress=False,
                          callbacks=[StopAt(40)])
    result = cut.result
    # stopped at the loop boundary after the step that asked (the collect's updates are finished)
    assert result["stopped_by"] == "StopAt" and not result["interrupted"] and not result["stop"]
    assert 40 <= result["train_iter"] < 48
    assert os.path.isfile(result["final_checkpoint"])
    resumed = serial_pipeline(None, resume=result["exp_dir"], progress=False)  # keeps its limit of 120
    assert resumed.result["train_iter"] == whole.result["train_iter"] == 120
    assert resumed.result["env_step"] == whole.result["env_step"]
    a = read_checkpoint(whole.result["final_checkpoint"])["policy"]["model"]
    b = read_checkpoint(resumed.result["final_checkpoint"])["policy"]["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


class EveryFive(LearnerHook):
    """A user's learner hook: notes every fifth iteration, stops the run at ``stop``."""

    def __init__(self, stop: int) -> None:
        super().__init__("every_five", "after_iter", priority=90)
        self.seen: List[int] = []
        self.stop = stop

    def __call__(self, learner: Any) -> None:
        if learner.train_iter % 5 == 0:
            self.seen.append(learner.train_iter)
        if learner.train_iter == self.stop:
            raise StopRun("enough")


def test_a_learner_hook_given_as_a_callback_runs_in_the_learner_and_may_stop_the_run(tmp_path):
    main, create = copy.deepcopy(cartpole_ppo_config.main_config), copy.deepcopy(cartpole_ppo_config.create_config)
    main["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=10**9, confirm_episode=0))
    main["env"]["collector_env_num"] = 2
    main["policy"]["collect"]["n_sample"] = 64
    main["policy"]["learn"].update(epoch_per_collect=1, batch_size=64)
    hook = EveryFive(stop=10)
    policy = serial_pipeline_onpolicy([main, create], seed=0, max_train_iter=30, exp_name=str(tmp_path / "ppo"),
                                      progress=False, callbacks=[hook])
    assert hook.seen == [5, 10] and policy.result["train_iter"] == 10  # on-policy: one train a collect
    assert policy.result["stopped_by"] == "EveryFive: enough"
    assert os.path.isfile(policy.result["final_checkpoint"])


def test_on_eval_is_a_callback_and_what_it_raises_ends_the_run(tmp_path):
    rows: List[Dict[str, Any]] = []

    class Prune(Exception):
        pass

    def on_eval(row: Dict[str, Any]) -> None:
        rows.append(row)
        if len(rows) == 2:
            raise Prune

    with pytest.raises(Prune):
        serial_pipeline(_dqn(eval_freq=100), seed=0, max_env_step=10_000, exp_name=str(tmp_path / "t"),
                        progress=False, on_eval=on_eval, callbacks=[Log()])
    assert len(rows) == 2 and not (tmp_path / "t" / "result.json").exists()


def test_a_ctrl_c_that_came_before_a_callbacks_stop_stays_the_runs_outcome(tmp_path):
    """What ``-m tune`` relies on: its evaluation callback stops an over-budget trial by StopRun; a
    SIGINT that arrived first must still read as an interrupt (exit 130, a resume), not a callback's stop."""
    def on_eval(row: Dict[str, Any]) -> None:
        signal.raise_signal(signal.SIGINT)  # the run core's handler takes it as a stop request
        raise StopRun("over budget")

    policy = serial_pipeline(_dqn(eval_freq=100), seed=0, max_env_step=10_000, exp_name=str(tmp_path / "t"),
                             progress=False, on_eval=on_eval)
    assert policy.result["interrupted"] and policy.result["signal"] == "SIGINT"
    assert os.path.isfile(policy.result["final_checkpoint"])


class _SignalInEval(GymnasiumEnv):
    """CartPole that, once armed, raises SIGTERM in its next step and counts the steps after it."""

    armed = False
    steps_after = 0

    def step(self, action):  # type: ignore[override]
        if _SignalInEval.armed:
            _SignalInEval.steps_after += 1
            if _SignalInEval.steps_after == 1:
                signal.raise_signal(signal.SIGTERM)
        return super().step(action)


ENV_REGISTRY.register("signal_in_eval_test", _SignalInEval)


class _ArmAtStart(RunCallback):
    def on_run_start(self, run: Run) -> None:
        _SignalInEval.armed = True  # no warm-up: the loop's first env step is its first evaluation's


def test_a_signal_during_an_evaluation_cuts_it_short_and_the_run_saves(tmp_path):
    """A scheduler's SIGTERM gives seconds of grace: the run must not finish a long evaluation (here
    1,000 episodes) before it saves. The evaluation stops at the next env step, records nothing,
    and the point counts as not evaluated (the checkpoint's evaluator state says so)."""
    _SignalInEval.armed, _SignalInEval.steps_after = False, 0
    main, create = _dqn(eval_freq=100)
    main["env"].update(n_evaluator_episode=1000)
    main["policy"]["random_collect_size"] = 0
    create["env"] = dict(type="signal_in_eval_test")
    exp = tmp_path / "t"
    policy = serial_pipeline([main, create], seed=0, max_env_step=10_000, exp_name=str(exp), progress=False,
                             callbacks=[_ArmAtStart()])
    _SignalInEval.armed = False
    assert policy.result["interrupted"] and policy.result["signal"] == "SIGTERM"
    # the signalling step of one evaluator env, then none of the other 999+ episodes' steps
    assert _SignalInEval.steps_after <= 2, _SignalInEval.steps_after
    rows = (exp / "progress.csv").read_text().splitlines() if (exp / "progress.csv").exists() else []
    assert len(rows) <= 1  # at most a header: the cut evaluation wrote no row
    state = read_checkpoint(policy.result["final_checkpoint"])
    evaluator = state["components"]["evaluator"]  # not marked evaluated: a resumed run evaluates this point
    assert evaluator["last_eval_mark"] is None and evaluator["last_eval_iter"] is None, evaluator
    assert state["envstep"] == 0  # nothing was collected after the signal


def test_bad_callbacks_and_modes_are_one_line_errors():
    cfg = Config({"seed": 0, "exp_name": "x", "policy": {}})
    with pytest.raises(TypeError, match="valid choices: a RunCallback"):
        Run(cfg, "serial", callbacks=[print])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unknown run mode 'nope'; valid choices: serial"):
        Run(cfg, "nope")


def test_league_callbacks_get_the_league_rows_and_may_stop(tmp_path):
    pytest.importorskip("pettingzoo")
    pytest.importorskip("trueskill")
    from stride.entry import league_pipeline
    from tests.entry.test_league_entry import _small
    from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config

    class FirstSnapshot(Log):
        def on_eval(self, row: Mapping[str, object]) -> bool:
            super().on_eval(row)
            return True

    log = FirstSnapshot()
    policy = league_pipeline([_small(), create_config], seed=0, max_env_step=600, exp_name=str(tmp_path / "lg"),
                             progress=False, callbacks=[log])
    assert len(log.rows) == 1 and "mu" in log.rows[0] and log.rows[0]["stop"] is False
    assert policy.result["stopped_by"] == "FirstSnapshot" and policy.result["snapshots"] == 1
    assert log.collects and log.trains and log.calls == ["start", "end"]
    assert os.path.isfile(policy.result["final_checkpoint"])


def _bc(tmp_path) -> List[Dict[str, Any]]:
    """Behaviour cloning on two expert CartPole episodes written to ``tmp_path/demo``, never stopping."""
    pytest.importorskip("minari")
    from tests.entry.test_serial_entry_offline import config, expert_episodes
    import gymnasium as gym
    from stride.data.demo import write_demo_dataset

    env = gym.make("CartPole-v1")
    data = write_demo_dataset(str(tmp_path / "demo"), expert_episodes(2), env.observation_space, env.action_space,
                              env_id="CartPole-v1", seed=0)
    env.close()
    main, create = config(data)
    main["env"]["stop_value"] = 1e9
    return [main, create]


def test_offline_callbacks_see_every_train_step_and_may_stop(tmp_path):
    from stride.entry import serial_pipeline_offline

    main, create = _bc(tmp_path)
    log = Log()
    policy = serial_pipeline_offline([main, create], seed=0, max_train_iter=100, exp_name=str(tmp_path / "bc"),
                                     progress=False, callbacks=[log, StopAt(30)])
    assert policy.result["train_iter"] == 30 and policy.result["stopped_by"] == "StopAt"
    assert log.trains == list(range(1, 31)) and not log.collects and log.rows  # evaluated at train_iter 0


def _flushing() -> bool:
    return torch.tensor([1e-323], dtype=torch.float64).item() == 0.0  # a denormal double, flushed or not


class SeesFlush(RunCallback):
    def __init__(self) -> None:
        self.flushing: List[bool] = []

    def on_train(self, train_iter: int, log: Mapping[str, object]) -> None:
        self.flushing.append(_flushing())


def test_a_run_trains_with_denormals_flushed_and_gives_the_process_its_setting_back(tmp_path):
    from stride.entry.run import denormals_flushed

    assert not _flushing()
    with denormals_flushed():
        assert _flushing()
    assert not _flushing()
    seen = SeesFlush()
    serial_pipeline(_dqn(), seed=0, max_train_iter=3, exp_name=str(tmp_path / "dqn"), progress=False, callbacks=[seen])
    assert seen.flushing and all(seen.flushing) and not _flushing()


def _same_model(policy: Any, ckpt: str) -> bool:
    saved = read_checkpoint(ckpt)["policy"]["model"]
    mine = policy.learn_mode.state_dict()["model"]
    return all(torch.equal(saved[k], mine[k]) for k in saved)


def test_return_best_gives_the_best_confirmed_evaluations_policy_and_resume_gives_it_again(tmp_path):
    cfg = _dqn(eval_freq=100)
    cfg[0]["policy"]["eval"]["evaluator"].update(confirm_episode=4, return_best=True)
    policy = serial_pipeline(cfg, seed=0, max_env_step=1200, exp_name=str(tmp_path / "best"), progress=False)
    result = policy.result
    best = result["best_eval"]
    assert result["returned"] == "best" and os.path.isfile(best["checkpoint"])
    rows = list(csv.DictReader(open(os.path.join(result["exp_dir"], "progress.csv"))))
    confirmed = [float(r["confirm_return_mean"]) for r in rows if r["confirm_return_mean"]]
    assert confirmed and best["score"] == max(confirmed)  # ranked by the confirmations
    assert _same_model(policy, best["checkpoint"])
    assert best["train_iter"] < result["train_iter"]  # (the last evaluation is not the end of the run)
    assert not _same_model(policy, result["final_checkpoint"])  # which keeps the last state for --resume
    again = serial_pipeline(None, resume=result["exp_dir"], progress=False)  # already finished: as it returned
    assert again.result["already_finished"] and _same_model(again, best["checkpoint"])


def test_without_return_best_a_run_returns_its_last_policy(tmp_path):
    policy = serial_pipeline(_dqn(eval_freq=100), seed=0, max_env_step=600, exp_name=str(tmp_path / "last"),
                             progress=False)
    assert policy.result["returned"] == "last" and policy.result["best_eval"]["checkpoint"].endswith("ckpt_best.pth.tar")
    assert _same_model(policy, policy.result["final_checkpoint"])


def test_an_offline_run_returns_its_best_evaluation_too(tmp_path):
    from stride.entry import serial_pipeline_offline

    main, create = _bc(tmp_path)
    main["policy"].setdefault("eval", {}).setdefault("evaluator", {}).update(eval_freq=20, return_best=True)
    policy = serial_pipeline_offline([main, create], seed=0, max_train_iter=60, exp_name=str(tmp_path / "bc"),
                                     progress=False)
    assert policy.result["returned"] == "best" and _same_model(policy, policy.result["best_eval"]["checkpoint"])
