"""PPO with an intrinsic reward column (RND): two value heads, episodic vs non-episodic GAE by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from stride.envs.base_env import BaseEnvTimestep
from stride.model.template.vac import VAC
from stride.utils.errors import ConfigError

from .test_ppo_policy import ACT, OBS, make_policy

KEY = "intrinsic_reward"
INTRINSIC = {"intrinsic_reward_key": KEY, "model": {"critic_head_num": 2}}


class TwoValuesFromObs(nn.Module):
    """V_ext(s) = s[0], V_int(s) = s[1] (+ w); uniform logits: GAE checkable by hand."""

    action_space = "discrete"
    critic_head_num = 2

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, obs, mode="compute_actor_critic"):
        return {"logit": torch.zeros(obs.shape[0], ACT) + self.w, "value": obs[:, :2] + self.w}


def _terminated_segment(policy) -> list:
    """obs s0..s2 = [1,1], [2,2], [3,1], final next_obs [4,2]; extrinsic rewards 1, 0, 2; terminated
    at the third step; intrinsic rewards 0.5, 1, 0.5 (as the reward model adds them)."""
    states = [np.array([v, c, 0, 0], dtype=np.float32) for v, c in ((1, 1), (2, 2), (3, 1), (4, 2))]
    out = policy.collect_mode.forward({0: states[0]})[0]
    trans = []
    for t, r in enumerate([1.0, 0.0, 2.0]):
        last = t == 2
        info = {"terminated": True, "truncated": False} if last else {}
        trans.append(policy.collect_mode.process_transition(states[t], out, BaseEnvTimestep(states[t + 1], r, last, info)))
    samples = policy.collect_mode.get_train_sample(trans)
    return [{**s, KEY: r} for s, r in zip(samples, [0.5, 1.0, 0.5])]


def _learn(ext_w: float, int_w: float) -> dict:
    p = make_policy(net=TwoValuesFromObs(), discount_factor=0.9, gae_lambda=0.8, intrinsic_discount_factor=0.5,
                    extrinsic_adv_weight=ext_w, intrinsic_adv_weight=int_w,
                    learn={"value_norm": False, "epoch_per_collect": 1, "batch_size": 3}, **INTRINSIC)
    return p.learn_mode.forward(_terminated_segment(p))


def test_two_head_gae_extrinsic_episodic_intrinsic_not():
    # extrinsic (gamma 0.9, lambda 0.8), cut at the termination: A = 1.7856, -0.02, -1.0; R = V + A
    # intrinsic (gamma 0.5): V_int 1, 2, 1, next V_int 2, 1, 2; deltas 0.5, -0.5, and 0.5 + 0.5 * 2 - 1 = 0.5
    # (bootstrapped through the termination); A_int = 0.38, -0.3, 0.5 (gamma*lambda 0.4); R_int = 1.38, 1.7, 1.5
    out = _learn(1.0, 0.0)
    assert out["adv_mean"] == pytest.approx((1.7856 - 0.02 - 1.0) / 3, abs=1e-5)
    assert out["return_mean"] == pytest.approx((2.7856 + 1.98 + 2.0) / 3, abs=1e-5)
    assert out["adv_int_mean"] == pytest.approx((0.38 - 0.3 + 0.5) / 3, abs=1e-5)
    assert out["return_int_mean"] == pytest.approx((1.38 + 1.7 + 1.5) / 3, abs=1e-5)
    assert "value_loss_int" in out
    # an episodic intrinsic GAE would give A_int = 0.22, -0.7, -0.5: the test tells them apart
    assert out["adv_int_mean"] != pytest.approx((0.22 - 0.7 - 0.5) / 3, abs=1e-3)


@pytest.mark.parametrize("ext_w, int_w", [(0.0, 1.0), (2.0, 1.0)])
def test_advantages_combine_with_the_weights(ext_w, int_w):
    ext, intr = np.array([1.7856, -0.02, -1.0]), np.array([0.38, -0.3, 0.5])
    assert _learn(ext_w, int_w)["adv_mean"] == pytest.approx((ext_w * ext + int_w * intr).mean(), abs=1e-5)


def test_plain_ppo_keeps_one_head_and_no_env_id():
    p = make_policy()
    out = p.collect_mode.forward({3: np.zeros(OBS, dtype=np.float32)})[3]
    assert "env_id" not in out
    assert p.model.critic_head_num == 1 and p.model(torch.zeros(2, OBS), mode="compute_critic")["value"].shape == (2,)


def test_transitions_carry_their_env_id_for_the_intrinsic_stream():
    p = make_policy(**INTRINSIC)
    obs = {3: np.zeros(OBS, dtype=np.float32), 5: np.ones(OBS, dtype=np.float32)}
    out = p.collect_mode.forward(obs)
    assert out[3]["env_id"] == 3 and out[5]["env_id"] == 5
    t = p.collect_mode.process_transition(obs[5], out[5], BaseEnvTimestep(obs[5], 0.0, False, {}))
    assert t["env_id"] == 5
    assert p.model(torch.zeros(2, OBS), mode="compute_critic")["value"].shape == (2, 2)


def test_heads_must_match_the_intrinsic_key():
    with pytest.raises(ConfigError, match="critic_head_num"):
        make_policy(intrinsic_reward_key=KEY)
    with pytest.raises(ConfigError, match="critic_head_num"):
        make_policy(model={"critic_head_num": 2})


def test_a_batch_without_the_intrinsic_column_is_one_clear_error():
    p = make_policy(net=TwoValuesFromObs(), **INTRINSIC)
    samples = [{k: v for k, v in s.items() if k != KEY} for s in _terminated_segment(p)]
    with pytest.raises(ConfigError, match="reward_model=dict\\(type='rnd'\\)"):
        p.learn_mode.forward(samples)


def test_vac_two_heads_share_the_critic_body():
    torch.manual_seed(0)
    m = VAC(OBS, ACT, critic_head_num=2)
    out = m(torch.randn(5, OBS))
    assert out["value"].shape == (5, 2) and out["logit"].shape == (5, ACT)
