"""BaseLearner: hooks (positions, priority order), train_iter counting, priority_info, checkpoints."""

from __future__ import annotations

import os
import random
from collections import namedtuple

import numpy as np
import pytest
import torch

from stride.utils.errors import ConfigError, StrideError
from stride.worker import BaseLearner, LearnerHook
from stride.worker.learner import LoadCkptHook, SaveCkptHook
from .stride_worker_fakes import make_policy

FakeLearnMode = namedtuple("FakeLearnMode", ["forward", "state_dict", "load_state_dict", "set_envstep"])


class Recorder:
    """A learn mode whose loss is the number of forward calls; may return priorities."""

    def __init__(self, priority=False):
        self.calls = 0
        self.priority = priority
        self.loaded = None
        self.envsteps = []

    def forward(self, data):
        self.calls += 1
        out = {"total_loss": float(self.calls), "cur_lr": 0.1}
        if self.priority:
            n = len(data) if isinstance(data, list) else len(data["obs"])
            out["priority"] = [float(i) for i in range(n)]
        return out

    def mode(self):
        return FakeLearnMode(self.forward, lambda: {"calls": self.calls}, self._load, self.envsteps.append)

    def _load(self, sd):
        self.loaded = sd
        self.calls = sd["calls"]


class Log(LearnerHook):
    def __init__(self, name, position, priority, events, freq=1):
        super().__init__(name, position, priority, freq)
        self.events = events

    def __call__(self, learner):
        self.events.append((self.name, self.position, learner.train_iter))


class TB:
    def __init__(self):
        self.scalars = {}

    def add_scalar(self, tag, value, step):
        self.scalars.setdefault(tag, []).append((step, value))


# ---- hooks ----------------------------------------------------------------------------------------
def test_hooks_positions_and_priority_order():
    events = []
    learner = BaseLearner(None, Recorder().mode())
    for name, pos, prio in [("a50", "after_iter", 50), ("a10", "after_iter", 10), ("a30", "after_iter", 30),
                            ("a30b", "after_iter", 30), ("b", "before_iter", 100), ("r0", "before_run", 5),
                            ("r1", "after_run", 5)]:
        learner.register_hook(Log(name, pos, prio, events))
    learner.call_hook("before_run")
    learner.train([{"obs": 1}])
    learner.train([{"obs": 1}])
    learner.call_hook("after_run")
    assert events == [
        ("r0", "before_run", 0),
        ("b", "before_iter", 0), ("a10", "after_iter", 1), ("a30", "after_iter", 1), ("a30b", "after_iter", 1),
        ("a50", "after_iter", 1),
        ("b", "before_iter", 1), ("a10", "after_iter", 2), ("a30", "after_iter", 2), ("a30b", "after_iter", 2),
        ("a50", "after_iter", 2),
        ("r1", "after_run", 2),
    ]


def test_bad_hook_position():
    with pytest.raises(ValueError, match="valid choices: before_run, after_run, before_iter, after_iter"):
        LearnerHook("x", "after_step")
    with pytest.raises(ValueError, match="valid choices"):
        BaseLearner(None, Recorder().mode()).call_hook("after_step")


def test_log_buffer_visible_to_after_iter_hooks():
    seen = []

    class Peek(LearnerHook):
        def __call__(self, learner):
            seen.append(dict(learner.log_buffer))

    learner = BaseLearner(None, Recorder().mode())
    learner.register_hook(Peek("peek", "after_iter", 10))
    learner.train([{}])
    assert seen == [{"total_loss": 1.0, "cur_lr": 0.1}]


# ---- counting ------------------------------------------------------------------------------------
def test_train_iter_and_envstep_counting():
    rec = Recorder()
    learner = BaseLearner(None, rec.mode())
    assert learner.train_iter == 0 and learner.envstep == 0
    for i in range(5):
        out = learner.train([{}], envstep=10 * i)
        assert out["total_loss"] == i + 1
    assert learner.train_iter == learner.last_iter == 5 and rec.calls == 5
    assert learner.envstep == learner.collector_envstep == 40
    assert rec.envsteps == [0, 10, 20, 30, 40]  # the policy is told (its env-step schedules follow it)
    learner.train([{}])  # envstep None keeps the last one
    assert learner.envstep == 40
    learner.collector_envstep = 99
    assert learner.envstep == 99


def test_start_runs_train_iterations_between_run_hooks():
    events = []
    rec = Recorder()
    learner = BaseLearner({"train_iterations": 3}, rec.mode())
    learner.register_hook(Log("br", "before_run", 50, events))
    learner.register_hook(Log("ar", "after_run", 50, events))
    learner.start(lambda: [{}], envstep_fn=lambda: 7)
    assert events == [("br", "before_run", 0), ("ar", "after_run", 3)]
    assert rec.calls == 3 and learner.envstep == 7


# ---- priority ----------------------------------------------------------------------------------
def test_priority_is_the_last_steps_and_leaves_the_log():
    learner = BaseLearner(None, Recorder(priority=True).mode())
    assert learner.priority is None
    out = learner.train([{"obs": 0} for _ in range(3)])
    assert "priority" not in out
    assert learner.priority == [0.0, 1.0, 2.0]
    learner.train({"obs": np.zeros((4, 2))})
    assert learner.priority == [0.0, 1.0, 2.0, 3.0]


def test_priority_is_none_when_the_policy_gives_none():
    learner = BaseLearner(None, Recorder(priority=False).mode())
    learner.train([{"obs": 0}])
    assert learner.priority is None


def test_priority_with_real_dqn_policy():
    policy = make_policy(priority=True)
    learner = BaseLearner(None, policy.learn_mode)
    rng = np.random.default_rng(0)
    data = {"obs": rng.standard_normal((6, 3)).astype(np.float32), "action": np.zeros(6, np.int64),
            "reward": np.ones(6, np.float32), "next_obs": rng.standard_normal((6, 3)).astype(np.float32),
            "done": np.zeros(6, bool)}
    learner.train(data)
    assert len(learner.priority) == 6


# ---- log hook ---------------------------------------------------------------------------------
def test_log_show_hook_averages_over_freq():
    tb = TB()
    learner = BaseLearner({"hook": {"log_show_after_iter": 2}}, Recorder().mode(), tb_logger=tb)
    for i in range(4):
        learner.train([{}], envstep=100 * (i + 1))
    assert learner.last_log == {"total_loss": pytest.approx(3.5), "cur_lr": pytest.approx(0.1)}
    assert tb.scalars["learner_iter/total_loss"] == [(2, pytest.approx(1.5)), (4, pytest.approx(3.5))]
    assert tb.scalars["learner_step/total_loss"] == [(200, pytest.approx(1.5)), (400, pytest.approx(3.5))]


class Reads(torch.Tensor):
    """A tensor that counts the reads of its value to the host (what makes a GPU step wait)."""

    reads = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("item", "tolist", "__float__", "cpu", "numpy", "__bool__"):
            Reads.reads += 1
        return super().__torch_function__(func, types, args, kwargs or {})


class TensorLoss(Recorder):
    """A learn mode whose losses are tensors (as a policy on a GPU returns them)."""

    def forward(self, data):
        out = super().forward(data)
        out["total_loss"] = torch.tensor(out["total_loss"] / 3, dtype=torch.float32).as_subclass(Reads)
        out["q_value"] = torch.tensor(-2.0 * self.calls).as_subclass(Reads)
        return out


def test_log_show_hook_reads_tensors_only_when_it_writes():
    tb = TB()
    Reads.reads = 0
    learner = BaseLearner({"hook": {"log_show_after_iter": 3}}, TensorLoss().mode(), tb_logger=tb)
    for i in range(2):
        learner.train([{}], envstep=i)
    assert Reads.reads == 0 and learner.last_log == {}  # nothing read between writes
    learner.train([{}])
    # the same numbers as .item() of each step's value summed as floats, keys in the policy's order
    expect = sum(torch.tensor(c / 3, dtype=torch.float32).item() for c in (1, 2, 3)) / 3
    assert learner.last_log == {"total_loss": expect, "cur_lr": pytest.approx(0.1), "q_value": -4.0}
    assert list(learner.last_log) == ["total_loss", "cur_lr", "q_value"]
    assert tb.scalars["learner_iter/q_value"] == [(3, -4.0)]
    learner.train([{}])
    learner.call_hook("after_run")  # the run's end writes the rest
    assert learner.last_log["q_value"] == -8.0


def test_log_show_hook_folds_long_stretches_on_the_device(monkeypatch):
    from stride.worker.learner.hooks import LogShowHook

    monkeypatch.setattr(LogShowHook, "FOLD", 4)
    learner = BaseLearner({"hook": {"log_show_after_iter": 10}}, TensorLoss().mode())
    for _ in range(10):
        learner.train([{}])
    assert learner.last_log["q_value"] == pytest.approx(-11.0)
    assert learner.last_log["total_loss"] == pytest.approx(5.5 / 3)


def test_learner_unknown_config_keys():
    with pytest.raises(ConfigError, match="train_iteration"):
        BaseLearner({"train_iteration": 3}, Recorder().mode())
    with pytest.raises(ConfigError, match="save_ckpt_after_itr"):
        BaseLearner({"hook": {"save_ckpt_after_itr": 3}}, Recorder().mode())


# ---- checkpoints --------------------------------------------------------------------------------
class Component:
    def __init__(self, value):
        self.value = value

    def state_dict(self):
        return {"value": torch.tensor([self.value]), "plain": [1, 2, {"a": 3.5}]}

    def load_state_dict(self, sd):
        self.value = float(sd["value"][0])
        self.plain = sd["plain"]


def _batch(seed=0):
    rng = np.random.default_rng(seed)
    return {"obs": rng.standard_normal((8, 3)).astype(np.float32), "action": rng.integers(0, 2, 8),
            "reward": rng.standard_normal(8).astype(np.float32),
            "next_obs": rng.standard_normal((8, 3)).astype(np.float32), "done": rng.random(8) < 0.3}


def test_checkpoint_round_trip(tmp_path):
    exp = str(tmp_path / "exp")
    policy = make_policy(seed=0, learn={"target_update_freq": 2})
    learner = BaseLearner(None, policy.learn_mode, exp_name=exp)
    learner.register_state("thing", Component(4.0))
    for i in range(3):
        learner.train(_batch(i), envstep=123)
    random.seed(5)
    np.random.seed(6)
    torch.manual_seed(7)
    path = learner.save_checkpoint()
    assert path == os.path.join(exp, "ckpt", "iteration_3.pth.tar") and os.path.isfile(path)
    assert not [f for f in os.listdir(os.path.dirname(path)) if "tmp" in f]  # atomic: no temp file left
    with open(os.path.join(exp, "ckpt", "ckpt_latest.txt")) as f:
        assert f.read().strip() == "iteration_3.pth.tar"
    state = torch.load(path, weights_only=True)  # loadable without running code
    assert state["train_iter"] == 3 and state["envstep"] == 123
    expected_draws = (random.random(), np.random.rand(), torch.rand(3))
    trained = [p.detach().clone() for p in policy.model.parameters()]
    # a fresh learner over a differently initialised policy
    policy2 = make_policy(seed=42, learn={"target_update_freq": 2})
    learner2 = BaseLearner(None, policy2.learn_mode, exp_name=str(tmp_path / "exp2"))
    comp = Component(0.0)
    learner2.register_state("thing", comp)
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    learner2.load_checkpoint(path)
    assert learner2.train_iter == 3 and learner2.envstep == 123
    assert comp.value == 4.0 and comp.plain == [1, 2, {"a": 3.5}]
    assert all(torch.equal(a, b) for a, b in zip(trained, policy2.model.parameters()))
    assert (random.random(), np.random.rand()) == expected_draws[:2]
    assert torch.equal(torch.rand(3), expected_draws[2])
    # both continue identically (optimizer and target network restored too)
    out1, out2 = learner.train(_batch(9)), learner2.train(_batch(9))
    assert out1["total_loss"] == out2["total_loss"]
    assert all(torch.equal(a, b) for a, b in zip(policy.model.parameters(), policy2.model.parameters()))
    assert learner2.train_iter == 4


def test_best_checkpoint_does_not_move_latest(tmp_path):
    exp = str(tmp_path / "exp")
    learner = BaseLearner(None, make_policy().learn_mode, exp_name=exp)
    learner.train(_batch())
    learner.save_checkpoint()
    best = learner.save_checkpoint("ckpt_best.pth.tar")
    assert os.path.basename(best) == "ckpt_best.pth.tar" and os.path.isfile(best)
    with open(os.path.join(exp, "ckpt", "ckpt_latest.txt")) as f:
        assert f.read().strip() == "iteration_1.pth.tar"
    assert sorted(os.listdir(os.path.join(exp, "ckpt"))) == ["ckpt_best.pth.tar", "ckpt_latest.txt",
                                                             "iteration_1.pth.tar"]


def test_save_ckpt_hooks_every_freq_and_after_run(tmp_path):
    exp = str(tmp_path / "exp")
    learner = BaseLearner({"hook": {"save_ckpt_after_iter": 2}}, make_policy().learn_mode, exp_name=exp)
    for _ in range(5):
        learner.train(_batch())
    assert sorted(os.listdir(os.path.join(exp, "ckpt"))) == ["ckpt_latest.txt", "iteration_2.pth.tar",
                                                             "iteration_4.pth.tar"]
    learner.call_hook("after_run")
    assert os.path.isfile(os.path.join(exp, "ckpt", "iteration_5.pth.tar"))
    assert not any(isinstance(h, SaveCkptHook) for h in
                   BaseLearner({"hook": {"save_ckpt_after_run": False}}, make_policy().learn_mode,
                               exp_name=str(tmp_path / "e2"))._hooks["after_run"])


def test_no_exp_name_no_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    learner = BaseLearner({"hook": {"save_ckpt_after_iter": 1}}, make_policy().learn_mode)
    learner.train(_batch())
    learner.call_hook("after_run")
    assert learner.save_checkpoint() is None
    assert os.listdir(tmp_path) == []


def test_load_ckpt_hook_before_run(tmp_path):
    exp = str(tmp_path / "exp")
    learner = BaseLearner(None, make_policy(seed=0).learn_mode, exp_name=exp)
    learner.train(_batch(), envstep=55)
    path = learner.save_checkpoint()
    hooked = BaseLearner({"hook": {"load_ckpt_before_run": path}}, make_policy(seed=1).learn_mode)
    assert any(isinstance(h, LoadCkptHook) for h in hooked._hooks["before_run"])
    assert hooked.train_iter == 0
    hooked.call_hook("before_run")
    assert hooked.train_iter == 1 and hooked.envstep == 55


def test_load_checkpoint_errors(tmp_path):
    learner = BaseLearner(None, make_policy().learn_mode)
    with pytest.raises(StrideError, match="does not exist"):
        learner.load_checkpoint(str(tmp_path / "missing.pth.tar"))
    bad = tmp_path / "unsafe.pth.tar"
    torch.save({"policy": Component(1.0)}, bad)  # an arbitrary object: needs pickle to load
    with pytest.raises(StrideError, match="holds objects a safe load refuses") as e:
        learner.load_checkpoint(str(bad))
    assert "weights_only" not in str(e.value) and "\n" not in str(e.value)  # never suggests loading unsafely
    assert learner.train_iter == 0


def test_log_is_flushed_at_after_run():
    tb = TB()
    learner = BaseLearner({"hook": {"log_show_after_iter": 100}}, Recorder().mode(), tb_logger=tb)
    for _ in range(3):
        learner.train([{}], envstep=30)
    assert "learner_iter/total_loss" not in tb.scalars
    learner.call_hook("after_run")
    assert tb.scalars["learner_iter/total_loss"] == [(3, pytest.approx(2.0))]
    assert tb.scalars["learner_step/total_loss"] == [(30, pytest.approx(2.0))]
    learner.call_hook("after_run")  # nothing new accumulated: nothing written twice
    assert len(tb.scalars["learner_iter/total_loss"]) == 1


def test_hooks_see_the_learner_through_the_hook_host_protocol():
    from stride.worker.learner.hooks import HookHost, LogShowHook

    class Host:  # not a BaseLearner: a hook needs only what HookHost names
        def __init__(self):
            import logging
            self.logger = logging.getLogger("host")
            self.log_buffer, self.last_log, self.tb_logger = {"loss": 2.0}, {}, None
            self.train_iter, self.envstep = 1, 5

        def save_checkpoint(self):
            return None

        def load_checkpoint(self, path):
            pass

    host: HookHost = Host()
    LogShowHook(freq=1)(host)
    assert host.last_log == {"loss": 2.0}


def test_a_learner_without_a_policy_says_so():
    learner = BaseLearner({}, None)
    with pytest.raises(StrideError, match="no policy"):
        learner.train({"x": 1})
