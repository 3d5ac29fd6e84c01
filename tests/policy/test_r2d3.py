"""stride.policy.R2D3Policy: registered with the demo ratio; a demonstration episode becomes the same
sequences an agent episode does (one SequenceAdder path) with the model's initial state stored and
only its first sequence marked as an episode start; through serial_pipeline every learner batch
holds exactly round(pho * B) demonstration sequences first, and the learner's priorities reach the
demonstrations' own store (read back from the checkpoint)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from stride.config import merge_config
from stride.config.setting import REQUIRED
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import R2D2Policy, R2D3Policy
from stride.utils.registry import POLICY_REGISTRY

OBS, ACT = 3, 2
USER = {"model": {"obs_shape": OBS, "action_shape": ACT, "encoder_hidden_size_list": [8], "hidden_size": 6},
        "burnin_step": 2, "learn_unroll_len": 3, "nstep": 2, "collect": {"n_sample": 4, "data_path": "unused"},
        "learn": {"batch_size": 4}}


def test_registered_with_the_demo_ratio():
    assert POLICY_REGISTRY.get("r2d3") is R2D3Policy and issubclass(R2D3Policy, R2D2Policy)
    cfg = R2D3Policy.declared_config()
    assert cfg["collect"]["data_path"] is REQUIRED
    assert R2D3Policy.default_config().collect.demo_fraction == 0.25 and R2D3Policy.default_config().priority


def test_a_demonstration_episode_becomes_the_agents_sequences_from_the_initial_state():
    torch.manual_seed(0)
    r2d3 = R2D3Policy(merge_config(R2D3Policy.default_config(), copy.deepcopy(USER)))
    r2d2 = R2D2Policy(merge_config(R2D2Policy.default_config(), {k: v for k, v in USER.items() if k != "collect"}))
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(12, OBS)).astype(np.float32)
    zero = np.zeros(r2d3.model.initial_state(1).shape[1], np.float32)
    demo, agent = [], []
    for t in range(11):
        info = {"terminated": t == 10, "truncated": False}
        step = BaseEnvTimestep(obs[t + 1], 1.0, t == 10, info)
        demo.append(r2d3.collect_mode.process_transition(obs[t], {"action": np.int64(t % 2)},
                                                         BaseEnvTimestep(obs[t + 1], 1.0, t == 10, dict(info, demo=True))))
        agent.append(r2d2.collect_mode.process_transition(obs[t], {"action": np.int64(t % 2), "prev_state": zero,
                                                                   "start": t == 0}, step))
    got, want = r2d3.collect_mode.get_train_sample(demo), r2d2.collect_mode.get_train_sample(agent)
    assert len(got) == len(want) == 3  # 12 rows, windows of 7 every 3 rows (the last one padded)
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        for k in g:
            np.testing.assert_array_equal(g[k], w[k], err_msg=k)
    assert [g["start"] for g in got] == [True, False, False]
    assert all(not np.any(g["prev_state"]) for g in got)
    # the agent's own steps still store the state they acted from
    mine = r2d3.collect_mode.process_transition(obs[0], {"action": 0, "prev_state": np.ones_like(zero), "start": False},
                                                BaseEnvTimestep(obs[1], 1.0, False, {}))
    assert mine["prev_state"].tolist() == [1.0] * zero.size and not mine["start"]


def test_r2d2_refuses_demonstrations_in_one_line():
    from stride.utils.errors import ConfigError

    r2d2 = R2D2Policy(merge_config(R2D2Policy.default_config(), {k: v for k, v in USER.items() if k != "collect"}))
    obs = np.zeros(OBS, np.float32)
    with pytest.raises(ConfigError, match="policy type 'r2d2' stores no demonstrations .* 'r2d3'"):
        r2d2.collect_mode.process_transition(obs, {"action": 0}, BaseEnvTimestep(obs, 1.0, False, {"demo": True}))


pytest.importorskip("minari")


@pytest.fixture(scope="module")
def pomdp_demo(tmp_path_factory) -> str:
    from stride.zoo.cartpole import HideVelocity
    from tests.zoo.demo_helpers import random_demo

    return random_demo("CartPole-v1", str(tmp_path_factory.mktemp("r2d3") / "demo"), episodes=4, wrap=HideVelocity)


def small_config(data_path: str):
    from stride.entry.utils import zoo_config

    main, create = copy.deepcopy(zoo_config("cartpole_pomdp", "r2d3"))
    main["policy"]["collect"].update(data_path=data_path, demo_fraction=0.3)
    main["policy"]["learn"].update(batch_size=10, update_per_collect=2)
    main["env"].update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, stop_value=1e9)
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=10_000, confirm_episode=0)
    return main, create


def test_every_batch_holds_round_pho_b_demonstrations_and_their_priorities_reach_their_store(pomdp_demo, tmp_path,
                                                                                            monkeypatch):
    from stride.entry import serial_pipeline

    main, create = small_config(pomdp_demo)
    from stride.data.buffer import DemoMixBuffer

    seen, learnt = [], []
    learn, sample = R2D3Policy._forward_learn, DemoMixBuffer.sample_batch

    def spy(self, data):
        learnt.append(not {"replay_unique_id", "replay_buffer_idx"} & set(data))  # the policy sees no buffer ids
        return learn(self, data)

    def spy_sample(self, size, cur_learner_iter=-1):
        out = sample(self, size, cur_learner_iter)
        if out is not None:
            seen.append(out[1].ids.copy())
        return out

    monkeypatch.setattr(R2D3Policy, "_forward_learn", spy)
    monkeypatch.setattr(DemoMixBuffer, "sample_batch", spy_sample)
    policy = serial_pipeline([main, create], seed=0, max_train_iter=12, exp_name=str(tmp_path / "r2d3"), progress=False)
    assert len(seen) == len(learnt) == 12 and all(learnt)
    for ids in seen:  # round(0.3 * 10) = 3 demonstration sequences (ids -1 - id), first
        assert (ids[:3] < 0).all() and (ids[3:] >= 0).all()
    state = torch.load(policy.result["final_checkpoint"], weights_only=True)["components"]["buffer"]
    demo_ids = state["demo"]["ids"].numpy()
    demo_prio = dict(zip(demo_ids.tolist(), state["demo"]["priority"].numpy().tolist()))
    drawn = {int(-1 - i) for ids in seen for i in ids[:3]}
    # every drawn demonstration has the learner's priority (new items sit at 1.0), the others are untouched
    assert drawn and all(demo_prio[i] != 1.0 for i in drawn)
    assert all(p == 1.0 for i, p in demo_prio.items() if i not in drawn)



def test_resume_continues_exactly_with_both_stores(pomdp_demo, tmp_path):
    from stride.entry import serial_pipeline
    from stride.worker.learner.learner import read_checkpoint

    cfg = small_config(pomdp_demo)
    whole = serial_pipeline(copy.deepcopy(cfg), seed=1, max_train_iter=12, exp_name=str(tmp_path / "w"), progress=False)
    half = serial_pipeline(copy.deepcopy(cfg), seed=1, max_train_iter=6, exp_name=str(tmp_path / "h"), progress=False)
    resumed = serial_pipeline(None, max_train_iter=12, resume=half.result["exp_dir"], progress=False)
    a, b = (read_checkpoint(p.result["final_checkpoint"]) for p in (whole, resumed))
    assert resumed.result["train_iter"] == 12 and all(torch.equal(a["policy"]["model"][k], b["policy"]["model"][k])
                                                       for k in a["policy"]["model"])
    for store in ("demo", "agent"):
        assert torch.equal(a["components"]["buffer"][store]["priority"], b["components"]["buffer"][store]["priority"])
