"""Action masks end to end on the policy side: the DQN model returns the mask of
``{'observation', 'action_mask'}`` observations; collect (eps-greedy), eval (argmax) and random
warm-up pick legal actions only; the double-DQN target bootstraps from the best legal next action."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

from stride.config import merge_config
from stride.model import DQN
from stride.policy import DQNPolicy
from stride.policy.random_policy import random_collect_mode
from stride.rl_utils import q_nstep_td_error

N = 9


def _policy() -> DQNPolicy:
    cfg = merge_config(DQNPolicy.default_config(), {
        "model": {"obs_shape": [3, 3, 2], "action_shape": N, "encoder": "mlp", "encoder_hidden_size_list": [16]},
        "collect": {"n_sample": 8}, "learn": {"batch_size": 8}, "nstep": 1})
    torch.manual_seed(0)
    return DQNPolicy(cfg)


def _obs(rng, legal=None):
    mask = np.zeros(N, np.int8)
    mask[rng.choice(N, size=int(rng.integers(1, N)), replace=False) if legal is None else legal] = 1
    return {"observation": rng.integers(0, 2, (3, 3, 2)).astype(np.int8), "action_mask": mask}


def test_collect_eval_and_warm_up_only_pick_legal_actions():
    policy, rng = _policy(), np.random.default_rng(0)
    warm = random_collect_mode(gym.spaces.Discrete(N), policy.collect_mode, seed=0)
    seen = set()
    for _ in range(300):
        data = {i: _obs(rng) for i in range(8)}
        for mode, kwargs in ((policy.collect_mode, {"eps": 1.0}), (policy.collect_mode, {"eps": 0.3}),
                             (policy.eval_mode, {}), (warm, {})):
            out = mode.forward(data, **kwargs)
            for i, o in out.items():
                a = int(o["action"])
                assert data[i]["action_mask"][a], (a, data[i]["action_mask"])
                seen.add(a)
    assert seen == set(range(N))  # every action is reachable where it is legal


def test_explore_is_uniform_over_the_legal_actions():
    policy = _policy()
    rng = np.random.default_rng(1)
    obs = _obs(rng, legal=[1, 4, 8])
    counts = np.bincount([int(policy.collect_mode.forward({0: obs}, eps=1.0)[0]["action"]) for _ in range(1500)],
                         minlength=N)
    assert counts[[0, 2, 3, 5, 6, 7]].sum() == 0 and counts[[1, 4, 8]].min() > 400


def test_td_target_takes_the_best_legal_next_action():
    policy = _policy()
    rng = np.random.default_rng(2)
    batch = [{"obs": _obs(rng), "action": 0, "reward": 0.5, "next_obs": _obs(rng, legal=[2, 7]), "done": False}
             for _ in range(8)]
    for b in batch:
        b["obs"]["action_mask"][0] = 1
    # what the loss must equal: double-DQN over legal next actions only
    model = policy.model
    cat = {k: torch.as_tensor(np.stack([b[f][k] for b in batch for f in ("obs",)] + [b["next_obs"][k] for b in batch]))
           for k in ("observation", "action_mask")}
    with torch.no_grad():
        q_all = model(cat)["logit"]
        q, nq = q_all[:8], q_all[8:]
        legal = torch.zeros(N, dtype=torch.bool)
        legal[[2, 7]] = True
        next_a = nq.masked_fill(~legal, float("-inf")).argmax(-1)
        assert set(next_a.tolist()) <= {2, 7}
        want, _ = q_nstep_td_error(q, nq, torch.zeros(8, dtype=torch.long), next_a, torch.full((8,), 0.5),
                                   torch.zeros(8), policy.cfg.discount_factor, None, "mse")
    got = policy.learn_mode.forward(batch)["total_loss"]
    assert abs(got - want.item()) < 1e-5


def test_the_model_returns_the_mask_and_casts_integer_boards():
    model = DQN([3, 3, 2], N, encoder="mlp", encoder_hidden_size_list=[8])
    rng = np.random.default_rng(3)
    o = _obs(rng)
    out = model({k: torch.as_tensor(v)[None] for k, v in o.items()})
    assert out["logit"].shape == (1, N) and out["action_mask"].dtype == torch.bool
    assert out["action_mask"][0].tolist() == o["action_mask"].astype(bool).tolist()


def _ppo():
    from stride.policy import PPOPolicy

    cfg = merge_config(PPOPolicy.default_config(), {
        "model": {"obs_shape": [3, 3, 2], "action_shape": N, "encoder": "mlp", "encoder_hidden_size_list": [16],
                  "actor_head_hidden_size": 16, "critic_head_hidden_size": 16},
        "collect": {"n_sample": 16}, "learn": {"batch_size": 8, "epoch_per_collect": 2}})
    torch.manual_seed(0)
    return PPOPolicy(cfg)


def test_ppo_samples_legal_actions_and_learns_on_masked_observations():
    from types import SimpleNamespace

    policy, rng = _ppo(), np.random.default_rng(4)
    transitions = []
    for t in range(16):
        obs = _obs(rng)
        out = policy.collect_mode.forward({0: obs})[0]
        assert obs["action_mask"][int(out["action"])]  # sampled among the legal actions
        assert np.all(out["logit"][obs["action_mask"] == 0] <= -1e7)  # the stored old logits are masked too
        ts = SimpleNamespace(obs=_obs(rng), reward=1.0, done=t == 15, info={"terminated": True} if t == 15 else {})
        transitions.append(policy.collect_mode.process_transition(obs, out, ts))
    samples = policy.collect_mode.get_train_sample(transitions)
    assert policy.eval_mode.forward({0: samples[0]["obs"]})[0]["action"] in np.flatnonzero(samples[0]["obs"]["action_mask"])
    info = policy.learn_mode.forward(samples)
    assert all(np.isfinite(v) for v in info.values() if isinstance(v, float))  # entropy over legal actions: finite
