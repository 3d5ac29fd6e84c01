"""stride.policy.R2D2Policy: recurrent state per env (reset exactly at each env's own episode end),
sequences with stored states (burn-in from them equals a forward pass over the stored prefix),
padding and masks on hand-built episodes, every step learnt exactly once through the collector's
mid-episode segments, priorities = the mixed max/mean over the learnt rows, one-line config errors."""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest
import torch

from stride.config import merge_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import R2D2Policy
from stride.rl_utils import q_sequence_td_error, sequence_learnt_rows, sequence_nstep_return
from stride.utils.data import default_collate
from stride.utils.errors import ConfigError
from stride.utils.registry import POLICY_REGISTRY
from stride.worker import SampleCollector
from tests.worker.stride_worker_fakes import make_manager

OBS, ACT = 3, 2


def make_policy(seed: int = 0, **patch) -> R2D2Policy:
    user = {"model": {"obs_shape": OBS, "action_shape": ACT, "encoder_hidden_size_list": [8], "hidden_size": 6},
            "burnin_step": 2, "learn_unroll_len": 3, "nstep": 2, "discount_factor": 0.9,
            "collect": {"n_sample": 4}, "learn": {"batch_size": 4}}
    for k, v in patch.items():
        user[k] = {**user.get(k, {}), **v} if isinstance(v, dict) else v
    torch.manual_seed(seed)
    return R2D2Policy(merge_config(R2D2Policy.default_config(), user))


def reference_state(p: R2D2Policy, prefix: list) -> torch.Tensor:
    """The model's state after ``prefix`` (a list of observations) from the initial state."""
    if not prefix:
        return p.model.initial_state(1)[0]
    with torch.no_grad():
        return p.model(torch.as_tensor(np.stack(prefix)).unsqueeze(1))["next_state"][0]


def test_registered_with_r2d2_defaults():
    assert POLICY_REGISTRY.get("r2d2") is R2D2Policy
    cfg = R2D2Policy.default_config()
    assert (cfg.burnin_step, cfg.learn_unroll_len, cfg.nstep, cfg.discount_factor) == (20, 80, 5, 0.997)
    assert cfg.priority and cfg.priority_IS_weight and cfg.value_rescale and cfg.learn.priority_eta == 0.9


def test_random_collect_is_refused_in_one_line():
    with pytest.raises(ConfigError, match=r"random_collect_size=100: r2d2 .* valid choice: 0"):
        make_policy(random_collect_size=100)


def test_hidden_state_is_reset_exactly_at_each_envs_episode_end():
    """Three envs with episodes of different lengths, not all stepped in every call (as an async
    manager does): each env's state equals the model run over its own episode so far, from zero."""
    p = make_policy()
    rng = np.random.default_rng(0)
    lengths = {0: [3, 5, 2], 1: [6, 1, 4], 2: [2, 2, 7]}
    episode = {i: 0 for i in lengths}
    history = {i: [] for i in lengths}
    eval_history = {i: [] for i in lengths}
    for call in range(40):
        ready = [i for i in lengths if episode[i] < len(lengths[i]) and (call + i) % 3 != 0]
        if not ready:
            continue
        obs = {i: rng.standard_normal(OBS).astype(np.float32) for i in ready}
        out = p.collect_mode.forward(obs, eps=0.0)
        actions = p.eval_mode.forward(obs)
        for i in ready:
            assert out[i]["start"] == (not history[i])
            assert np.allclose(out[i]["prev_state"], reference_state(p, history[i]).numpy(), atol=1e-6)
            with torch.no_grad():
                q = p.model(torch.as_tensor(np.stack(eval_history[i] + [obs[i]])).unsqueeze(1))["logit"][-1, 0]
            assert int(actions[i]["action"]) == int(q.argmax())
            history[i].append(obs[i])
            eval_history[i].append(obs[i])
            if len(history[i]) == lengths[i][episode[i]]:  # this env's episode ends here
                p.collect_mode.reset([i])
                p.eval_mode.reset([i])
                history[i], eval_history[i] = [], []
                episode[i] += 1
    assert all(episode[i] == len(lengths[i]) for i in lengths)


def _episode(p: R2D2Policy, n: int, end: str | None, seed: int = 0):
    """One env's ``n`` transitions through collect mode; the last ends the episode by ``end``."""
    rng = np.random.default_rng(seed)
    obs = [rng.standard_normal(OBS).astype(np.float32) for _ in range(n + 1)]
    p.collect_mode.reset()
    trans = []
    for t in range(n):
        out = p.collect_mode.forward({0: obs[t]}, eps=0.0)[0]
        last = t == n - 1 and end is not None
        info = {"terminated": end == "terminated", "truncated": end == "truncated"} if last else {}
        trans.append(p.collect_mode.process_transition(obs[t], out, BaseEnvTimestep(obs[t + 1], float(t + 1), last, info)))
    return obs, trans


def test_sequences_on_a_hand_built_truncated_episode():
    # burn-in 2, unroll 3, nstep 2: sequences of 7 rows every 3 rows
    p = make_policy()
    obs, trans = _episode(p, 8, "truncated")
    seqs = p.collect_mode.get_train_sample(trans)
    # rows: 8 steps + the final observation = 9; windows start at rows 0 and 3 (the last one padded by 1)
    assert len(seqs) == 2
    a, b = seqs
    assert np.array_equal(a["obs"], np.stack(obs[0:7])) and a["start"] and a["mask"].all() and not a["last"].any()
    assert np.array_equal(b["obs"][:6], np.stack(obs[3:9])) and not b["start"]
    assert b["mask"].tolist() == [True] * 6 + [False] and b["last"].tolist() == [False] * 5 + [True, False]
    assert np.array_equal(b["obs"][6], np.zeros(OBS)) and b["reward"].tolist() == [4, 5, 6, 7, 8, 0, 0]
    assert not b["done"].any()  # truncation: bootstraps from the final observation
    # stored states: the state before each sequence's first row
    assert np.allclose(a["prev_state"], 0) and np.allclose(b["prev_state"], reference_state(p, obs[:3]).numpy(), atol=1e-6)


def test_burn_in_from_the_stored_state_equals_a_forward_pass_over_the_stored_prefix():
    p = make_policy(burnin_step=4, learn_unroll_len=5, nstep=1)
    obs, trans = _episode(p, 23, "terminated", seed=3)
    seqs = p.collect_mode.get_train_sample(trans)
    assert len(seqs) >= 4
    for j, s in enumerate(seqs):
        start = 5 * j  # sequences start every learn_unroll_len rows
        with torch.no_grad():
            warm = p.model(torch.as_tensor(s["obs"][:4]).unsqueeze(1), torch.as_tensor(s["prev_state"])[None])["next_state"][0]
        assert torch.allclose(warm, reference_state(p, obs[: start + 4]), atol=1e-5), j


def _learnt_rows(p: R2D2Policy, seqs: list) -> Counter:
    """(env, episode, t) of every row the learner trains on, over ``seqs`` (ChainEnv observations)."""
    burnin, unroll, gamma, n = p.cfg.burnin_step, p.cfg.learn_unroll_len, p.cfg.discount_factor, p.cfg.nstep
    rows = Counter()
    for s in seqs:
        col = lambda k: torch.as_tensor(s[k]).unsqueeze(1)  # noqa: E731
        ns = sequence_nstep_return(col("reward").float(), col("done"), col("last"), col("mask"), gamma, n)
        learnt = sequence_learnt_rows(col("last"), torch.tensor([s["start"]]), burnin, unroll)
        for t in range(len(s["mask"])):
            if ns.valid[t, 0] and learnt[t, 0]:
                rows[tuple(int(v) for v in s["obs"][t])] += 1
                boot = int(ns.boot[t, 0])
                if not ns.done[t, 0]:  # the bootstrap row is the k-th next observation of the same episode
                    assert tuple(s["obs"][boot][:2]) == tuple(s["obs"][t][:2]) and s["obs"][boot][2] == s["obs"][t][2] + boot - t
    return rows


@pytest.mark.parametrize("truncate", [False, True])
def test_every_step_is_learnt_exactly_once_through_the_collectors_segments(truncate):
    """Episodes longer than a segment: the collector keeps burn-in + n-step transitions of a
    mid-episode segment, and the sequences of consecutive segments tile the episode."""
    p = make_policy()
    manager = make_manager(3, length=lambda i, ep: 4 + 7 * i + 3 * ep, truncate=truncate)
    collector = SampleCollector({}, manager, p.collect_mode)
    try:
        seqs = []
        for _ in range(12):
            seqs += collector.collect(n_sample=6, policy_kwargs={"eps": 0.5})
    finally:
        manager.close()
    rows = _learnt_rows(p, seqs)
    assert max(rows.values()) == 1, [r for r, c in rows.items() if c > 1]
    finished = {(int(s["obs"][t][0]), int(s["obs"][t][1])) for s in seqs for t in range(len(s["last"])) if s["last"][t]}
    assert len(finished) >= 6
    for env, ep in finished:
        assert {t for e, k, t in rows if (e, k) == (env, ep)} == set(range(4 + 7 * env + 3 * ep)), (env, ep)


def test_learn_step_priorities_are_the_mixed_max_mean_over_the_learnt_rows():
    p = make_policy(learn={"batch_size": 3, "priority_eta": 0.7}, value_rescale=True)
    seqs = []
    for seed in range(3):
        seqs += p.collect_mode.get_train_sample(_episode(p, 9, "terminated", seed=seed)[1])
    batch = default_collate(seqs[:3])
    before = copy.deepcopy(p.model)
    out = p.learn_mode.forward(seqs[:3])
    # reference: the same loss on the whole sequence at once with the weights before the step
    obs = batch["obs"].transpose(0, 1)
    with torch.no_grad():
        q = before(obs, batch["prev_state"])["logit"]
    tt = lambda k: batch[k].transpose(0, 1)  # noqa: E731
    ns = sequence_nstep_return(tt("reward").float(), tt("done"), tt("last"), tt("mask"), 0.9, 2)
    train = sequence_learnt_rows(tt("last"), batch["start"], 2, 3)
    _, td = q_sequence_td_error(q, q, tt("action"), ns, train)
    m = train & ns.valid
    expect = [0.7 * td[m[:, b], b].max().item() + 0.3 * td[m[:, b], b].mean().item() for b in range(3)]
    assert out["priority"].shape == (3,) and np.allclose(out["priority"], expect, rtol=1e-4)
    assert not all(torch.equal(a, b) for a, b in zip(before.parameters(), p.model.parameters()))


def test_the_collectors_checkpoint_carries_each_envs_recurrent_state():
    """A resumed run continues its open episodes from their recurrent states (and knows which envs
    are inside an episode): the collector's state_dict carries them; without it they restart from zeros."""
    p = make_policy()
    manager = make_manager(3, length=lambda i, ep: 20 + i, truncate=False)
    collector = SampleCollector({}, manager, p.collect_mode)
    try:
        collector.collect(n_sample=7, policy_kwargs={"eps": 0.5})
        saved = collector.state_dict()
    finally:
        manager.close()
    assert sorted(saved["policy"]["running"]) == [0, 1, 2]
    fresh, resumed = make_policy(), make_policy()
    for q in (fresh, resumed):
        q.learn_mode.load_state_dict(p.learn_mode.state_dict())
    manager = make_manager(3, length=lambda i, ep: 20 + i, truncate=False)
    again = SampleCollector({}, manager, resumed.collect_mode)
    try:
        again.load_state_dict(saved)
    finally:
        manager.close()
    obs = {i: np.full(OBS, 0.5, dtype=np.float32) for i in range(3)}
    want, got, cold = (q.collect_mode.forward(obs, eps=0.0) for q in (p, resumed, fresh))
    for i in range(3):
        assert np.array_equal(got[i]["prev_state"], want[i]["prev_state"]) and got[i]["start"] is want[i]["start"] is False
        assert not np.allclose(cold[i]["prev_state"], want[i]["prev_state"]) and cold[i]["start"] is True
