"""stride.model.QAC: actor/critic shapes per action space, twin critics, modes, config defaults."""

from __future__ import annotations

import pytest
import torch

from stride.config.compile import _model_defaults
from stride.config.setting import plain
from stride.model import QAC
from stride.utils.registry import MODEL_REGISTRY


def test_registered_and_signature_defaults():
    assert MODEL_REGISTRY.get("qac") is QAC
    d = plain(_model_defaults(QAC))
    assert d["action_space"] == "regression" and d["twin_critic"] is False
    assert d["actor_hidden_size_list"] == [256, 256]


def test_regression_actor_is_bounded_and_shaped():
    m = QAC(5, 3, actor_hidden_size_list=[16], critic_hidden_size_list=[16])
    out = m(torch.randn(7, 5) * 100, mode="compute_actor")
    assert set(out) == {"action"} and out["action"].shape == (7, 3)
    assert out["action"].abs().max() <= 1.0


def test_reparameterization_actor_gives_positive_clamped_sigma():
    m = QAC(5, 2, action_space="reparameterization", actor_hidden_size_list=[16], critic_hidden_size_list=[16],
            log_sigma_range=(-3.0, 1.0))
    with torch.no_grad():
        m.actor.head.bias[2:] = 50.0  # log-sigma far above the range
    out = m(torch.randn(4, 5), mode="compute_actor")
    assert set(out) == {"mu", "sigma"} and out["mu"].shape == out["sigma"].shape == (4, 2)
    assert torch.allclose(out["sigma"], torch.full((4, 2), torch.e ** 1.0))


@pytest.mark.parametrize("twin, shape", [(False, (6,)), (True, (2, 6))])
def test_critic_shapes(twin, shape):
    m = QAC(4, 2, twin_critic=twin, actor_hidden_size_list=[8], critic_hidden_size_list=[8, 8])
    inputs = {"obs": torch.randn(6, 4), "action": torch.rand(6, 2)}
    q = m(inputs, mode="compute_critic")["q_value"]
    assert q.shape == shape
    assert torch.equal(q, m.compute_critic(inputs)["q_value"])


def test_twin_critics_are_independent_networks():
    m = QAC(4, 1, twin_critic=True, critic_hidden_size_list=[8])
    q = m({"obs": torch.randn(3, 4), "action": torch.rand(3, 1)}, mode="compute_critic")["q_value"]
    assert not torch.allclose(q[0], q[1])
    ids = [{id(p) for p in net.parameters()} for net in m.critic.nets]
    assert not ids[0] & ids[1]


def test_actor_and_critic_share_no_parameters():
    m = QAC(4, 1, action_space="reparameterization", twin_critic=True)
    actor, critic = {id(p) for p in m.actor.parameters()}, {id(p) for p in m.critic.parameters()}
    assert not actor & critic
    assert actor | critic == {id(p) for p in m.parameters()}


def test_tuple_shapes_and_image_like_obs_are_flattened():
    m = QAC((2, 3), (2, 2), actor_hidden_size_list=[8], critic_hidden_size_list=[8])
    a = m(torch.randn(5, 2, 3))["action"]
    assert a.shape == (5, 4)
    assert m({"obs": torch.randn(5, 2, 3), "action": torch.rand(5, 2, 2)}, mode="compute_critic")["q_value"].shape == (5,)


def test_bad_arguments_fail_clearly():
    with pytest.raises(ValueError, match="action_space 'gaussian'.*regression, reparameterization"):
        QAC(3, 1, action_space="gaussian")
    with pytest.raises(ValueError, match="mode 'compute_q'"):
        QAC(3, 1)(torch.randn(1, 3), mode="compute_q")


def test_forward_refuses_inputs_of_the_wrong_kind_for_its_mode():
    m = QAC(4, 2, actor_hidden_size_list=[8], critic_hidden_size_list=[8])
    with pytest.raises(TypeError, match="compute_critic takes a dict"):
        m(torch.zeros(3, 4), mode="compute_critic")
    with pytest.raises(TypeError, match="compute_actor takes an observation tensor"):
        m({"obs": torch.zeros(3, 4), "action": torch.zeros(3, 2)}, mode="compute_actor")


def test_goal_dict_observations_are_read_as_observation_and_desired_goal():
    """SAC / DDPG / TD3 + HER: actor and critic read a goal dict through goal_input, DQN's path too."""
    from stride.model.common import goal_input

    torch.manual_seed(0)
    m = QAC(5, 2, action_space="reparameterization", twin_critic=True, actor_hidden_size_list=[8],
            critic_hidden_size_list=[8])
    obs = {"observation": torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
           "achieved_goal": torch.tensor([[9.0, 9.0], [9.0, 9.0]]),
           "desired_goal": torch.tensor([[0.5, -0.5], [1.5, -1.5]], dtype=torch.float64)}
    flat = torch.tensor([[1.0, 2.0, 3.0, 0.5, -0.5], [4.0, 5.0, 6.0, 1.5, -1.5]])
    assert torch.equal(goal_input(obs), flat)  # float32, achieved_goal left out
    for key in ("mu", "sigma"):
        assert torch.equal(m(obs)[key], m(flat)[key])
    action = torch.tensor([[0.1, -0.2], [0.3, 0.4]])
    q_dict = m({"obs": obs, "action": action}, mode="compute_critic")["q_value"]
    assert q_dict.shape == (2, 2) and torch.equal(q_dict, m({"obs": flat, "action": action}, mode="compute_critic")["q_value"])
    # the achieved goal does not enter: changing it changes nothing
    other = dict(obs, achieved_goal=torch.zeros(2, 2))
    assert torch.equal(m(other)["mu"], m(obs)["mu"])
    with pytest.raises(TypeError, match="'observation' and 'desired_goal'.*got \\['goal', 'observation'\\]"):
        m({"observation": torch.zeros(1, 3), "goal": torch.zeros(1, 2)})
