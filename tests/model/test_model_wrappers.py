"""stride.model: DQN template and the model wrappers (shared parameters, sampling, target network)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from stride.model import DQN, IModelWrapper, model_wrap
from stride.model.common import DiscreteHead, DuelingHead
from stride.utils.errors import UnknownNameError


class Identity(nn.Module):
    """Returns its input as the logits: the test decides the Q values."""

    def forward(self, x, **kwargs):
        return {"logit": x}


class WithMask(nn.Module):
    def forward(self, x):
        return {"logit": x["logit"], "action_mask": x["mask"]}


# ---- DQN ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dueling,head", [(True, DuelingHead), (False, DiscreteHead)])
def test_dqn_output_shape_and_head(dueling, head):
    torch.manual_seed(0)
    m = DQN(4, 3, encoder_hidden_size_list=[16, 8], dueling=dueling)
    assert isinstance(m.head, head)
    out = m(torch.randn(5, 4))
    assert set(out) == {"logit"} and out["logit"].shape == (5, 3)


def test_dqn_dueling_value_stream_shifts_all_actions_equally():
    torch.manual_seed(0)
    m = DQN(4, 3, encoder_hidden_size_list=[8], dueling=True)
    x = torch.randn(6, 4)
    before = m(x)["logit"]
    with torch.no_grad():
        m.head.value[-1].bias += 2.0  # the V stream's output bias
    after = m(x)["logit"]
    assert torch.allclose(after - before, torch.full_like(before, 2.0), atol=1e-5)


def test_dqn_multi_dim_obs_is_flattened():
    m = DQN([2, 3], 2, encoder_hidden_size_list=[8])
    assert m(torch.randn(4, 2, 3))["logit"].shape == (4, 2)


@pytest.mark.parametrize("bad", [0, -1, (2,), 2.0])
def test_dqn_bad_action_shape(bad):
    with pytest.raises(ValueError, match="action_shape"):
        DQN(4, bad)


def test_dqn_unknown_activation():
    with pytest.raises(ValueError, match="valid choices"):
        DQN(4, 2, activation="swishy")


# ---- wrappers share the model ---------------------------------------------------------------------
@pytest.mark.parametrize("name,kwargs", [("base", {}), ("argmax_sample", {}), ("multinomial_sample", {}),
                                         ("eps_greedy_sample", {})])
def test_wrappers_share_parameters(name, kwargs):
    torch.manual_seed(0)
    m = DQN(4, 2, encoder_hidden_size_list=[8])
    w = model_wrap(m, name, **kwargs)
    assert isinstance(w, IModelWrapper) and w.unwrapped() is m
    assert [id(p) for p in w.parameters()] == [id(p) for p in m.parameters()]
    x = torch.randn(3, 4)
    fwd = {"eps": 0.0} if name == "eps_greedy_sample" else {}
    before = w.forward(x, **fwd)["logit"].clone()
    with torch.no_grad():
        next(m.parameters()).add_(1.0)  # changing the model changes what the wrapper computes
    assert not torch.allclose(w.forward(x, **fwd)["logit"], before)
    # attribute fall-through: train()/eval() reach the model
    w.eval()
    assert not m.training
    w.train()
    assert m.training


def test_stacked_wrappers_unwrap_to_model():
    m = DQN(4, 2, encoder_hidden_size_list=[8])
    inner = model_wrap(m, "base")
    w = model_wrap(inner, "argmax_sample")
    assert w.unwrapped() is m
    assert w.wrapped_model is inner and inner.wrapped_model is m
    assert w(torch.zeros(2, 4))["action"].shape == (2,)


def test_model_wrap_default_and_unknown_name():
    m = Identity()
    assert type(model_wrap(m)).__name__ == "BaseModelWrapper"
    with pytest.raises(UnknownNameError) as e:
        model_wrap(m, "argmax_sampel")
    msg = str(e.value)
    assert "'argmax_sampel'" in msg and "did you mean 'argmax_sample'" in msg and "eps_greedy_sample" in msg


# ---- sampling wrappers ----------------------------------------------------------------------------
def test_argmax_sample():
    w = model_wrap(Identity(), "argmax_sample")
    out = w(torch.tensor([[0.1, 0.9, 0.3], [5.0, -1.0, 4.0]]))
    assert out["action"].tolist() == [1, 0]
    assert "logit" in out


def test_argmax_sample_respects_action_mask():
    w = model_wrap(WithMask(), "argmax_sample")
    out = w({"logit": torch.tensor([[0.1, 0.9, 0.3]]), "mask": torch.tensor([[1, 0, 1]])})
    assert out["action"].tolist() == [2]


def test_multinomial_sample_frequencies_and_temperature():
    torch.manual_seed(0)
    w = model_wrap(Identity(), "multinomial_sample")
    logit = torch.log(torch.tensor([0.2, 0.8])).repeat(4000, 1)
    a = w(logit)["action"]
    assert a.shape == (4000,) and set(a.unique().tolist()) <= {0, 1}
    assert abs(a.float().mean().item() - 0.8) < 0.03
    hot = w(logit, alpha=1000.0)["action"]  # very high temperature: almost uniform
    assert abs(hot.float().mean().item() - 0.5) < 0.03
    masked = model_wrap(WithMask(), "multinomial_sample")(
        {"logit": torch.zeros(500, 3), "mask": torch.tensor([0, 1, 1]).repeat(500, 1)})["action"]
    assert 0 not in masked.tolist() and {1, 2} == set(masked.tolist())


def test_eps_greedy_per_sample_coin():
    torch.manual_seed(0)
    w = model_wrap(Identity(), "eps_greedy_sample")
    logit = torch.tensor([[9.0, 0.0, 0.0, 0.0]]).repeat(2000, 1)  # greedy action 0
    a = w(logit, eps=0.5)["action"]
    # ONE batch holds both greedy and random actions (a per-batch coin would give all-0 or ~uniform)
    frac_greedy = (a == 0).float().mean().item()
    assert 0 < (a != 0).sum() and 0 < (a == 0).sum()
    assert abs(frac_greedy - (0.5 + 0.5 / 4)) < 0.04  # 0.625 expected
    assert abs((a != 0).float().mean().item() - 0.375) < 0.04


def test_eps_greedy_eps_zero_is_greedy_and_eps_one_is_uniform():
    torch.manual_seed(1)
    w = model_wrap(Identity(), "eps_greedy_sample")
    logit = torch.tensor([[0.0, 0.0, 7.0, 0.0]]).repeat(4000, 1)
    assert (w(logit, eps=0.0)["action"] == 2).all()
    a = w(logit, eps=1.0)["action"]
    freq = torch.bincount(a, minlength=4).float() / len(a)
    assert torch.all((freq - 0.25).abs() < 0.03), freq
    with pytest.raises(TypeError):
        w(logit)  # eps is required


# ---- hidden_state ---------------------------------------------------------------------------------
class Counter(nn.Module):
    """The state is a count per sample (initial 0); next_state = state + 1; logit = the state it started from."""

    def initial_state(self, n):
        return torch.zeros(n, 1)

    def forward(self, x, state=None):
        return {"logit": state.repeat(1, 2), "next_state": state + 1}


def test_hidden_state_keeps_one_state_per_env_id_and_resets_exactly_those_given():
    w = model_wrap(Counter(), "hidden_state", state_num=3, save_prev_state=True)
    w(torch.zeros(3, 1))
    out = w(torch.zeros(2, 1), data_id=[0, 2])
    assert out["prev_state"].flatten().tolist() == [1, 1] and out["next_state"].flatten().tolist() == [2, 2]
    assert w(torch.zeros(1, 1), data_id=[1])["prev_state"].flatten().tolist() == [1]
    w.reset(data_id=[0])
    assert w(torch.zeros(3, 1))["prev_state"].flatten().tolist() == [0, 2, 2]
    assert w.state.flatten().tolist() == [1, 3, 3]
    w.reset()
    assert w.state.flatten().tolist() == [0, 0, 0]


def test_hidden_state_grows_to_new_env_ids_and_refuses_negative_ones():
    w = model_wrap(Counter(), "hidden_state", state_num=1)
    w(torch.zeros(2, 1), data_id=[4, 0])
    assert w.state.flatten().tolist() == [1, 0, 0, 0, 1]
    with pytest.raises(ValueError, match=r"env id\(s\) \[-1\] are negative"):
        w(torch.zeros(1, 1), data_id=[-1])
    with pytest.raises(Exception, match="needs a model with initial_state"):
        model_wrap(Identity(), "hidden_state", state_num=2)


def test_hidden_state_composes_with_the_sampling_wrappers_and_resets_outside_inference_mode():
    w = model_wrap(model_wrap(Counter(), "hidden_state", state_num=2, save_prev_state=True), "eps_greedy_sample")
    with torch.inference_mode():
        out = w(torch.zeros(2, 1), data_id=[0, 1], eps=0.0)
    assert out["action"].tolist() == [0, 0] and "prev_state" in out
    w.reset(data_id=[1])  # states made under inference mode, reset outside it
    assert w(torch.zeros(2, 1), data_id=[0, 1], eps=0.0)["prev_state"].flatten().tolist() == [1, 0]
    a = model_wrap(model_wrap(Counter(), "hidden_state", state_num=1), "argmax_sample")
    assert a(torch.zeros(1, 1))["action"].tolist() == [0]


# ---- target -----------------------------------------------------------------------------------------
class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return {"logit": self.bn(self.fc(x))}


def _perturbed(m: nn.Module, seed: int) -> nn.Module:
    other = copy.deepcopy(m)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for t in list(other.parameters()) + [b for b in other.buffers() if b.is_floating_point()]:
            t.add_(torch.randn(t.shape, generator=g))
        other.bn.num_batches_tracked.fill_(7)
    return other


def _sd(m):
    return {k: v.clone() for k, v in m.state_dict().items()}


def test_target_assign_every_freq():
    online = BNNet()
    target = model_wrap(copy.deepcopy(online), "target", update_type="assign", update_kwargs={"freq": 3})
    t0 = _sd(target.unwrapped())
    src = _perturbed(online, 0)
    target.update(src.state_dict())
    target.update(src)  # a module is accepted too
    assert all(torch.equal(v, t0[k]) for k, v in target.unwrapped().state_dict().items())
    assert target.update_count == 2
    target.update(src.state_dict())
    assert all(torch.equal(v, src.state_dict()[k]) for k, v in target.unwrapped().state_dict().items())
    # next copy only after 3 more updates
    src2 = _perturbed(online, 1)
    target.update(src2)
    target.update(src2)
    assert torch.equal(target.unwrapped().fc.weight, src.fc.weight)
    target.update(src2)
    assert torch.equal(target.unwrapped().fc.weight, src2.fc.weight)


@pytest.mark.parametrize("as_module", [True, False])
def test_target_momentum_lerps_parameters_and_float_buffers(as_module):
    online = BNNet()
    target = model_wrap(copy.deepcopy(online), "target", update_type="momentum", update_kwargs={"theta": 0.25})
    t0 = _sd(target.unwrapped())
    src = _perturbed(online, 0)
    target.update(src if as_module else src.state_dict())
    sd, new = target.unwrapped().state_dict(), src.state_dict()
    for k in ("fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"):
        assert torch.allclose(sd[k], 0.75 * t0[k] + 0.25 * new[k], atol=1e-6), k
    assert sd["bn.num_batches_tracked"].item() == 7  # integer buffers are copied
    # second update continues from the averaged weights
    target.update(src if as_module else src.state_dict())
    w = target.unwrapped().fc.weight
    assert torch.allclose(w, 0.75 * (0.75 * t0["fc.weight"] + 0.25 * new["fc.weight"]) + 0.25 * new["fc.weight"],
                          atol=1e-6)
    # the source is never modified
    assert torch.equal(src.fc.weight, new["fc.weight"])


def test_target_direct_reset_and_counter():
    online = BNNet()
    target = model_wrap(copy.deepcopy(online), "target", update_type="assign", update_kwargs={"freq": 100})
    src = _perturbed(online, 2)
    target.update(src)
    target.update(src, direct=True)
    assert torch.equal(target.unwrapped().fc.weight, src.fc.weight) and target.update_count == 0
    target.reset(target_update_count=99)
    src2 = _perturbed(online, 3)
    target.update(src2)  # the 100th update copies
    assert torch.equal(target.unwrapped().fc.weight, src2.fc.weight)
    target.reset()
    assert target.update_count == 0


def test_target_wrapper_does_not_share_with_online_when_given_a_copy():
    online = BNNet()
    target = model_wrap(copy.deepcopy(online), "target", update_type="assign", update_kwargs={"freq": 1})
    with torch.no_grad():
        online.fc.weight.add_(1.0)
    assert not torch.equal(target.unwrapped().fc.weight, online.fc.weight)


@pytest.mark.parametrize("kind,kwargs,match", [
    ("assign", {"freq": 0}, "freq"), ("momentum", {"theta": 0.0}, "theta"), ("momentum", {"theta": 1.5}, "theta"),
    ("polyak", {}, "valid choices: assign, momentum"),
])
def test_target_bad_arguments(kind, kwargs, match):
    with pytest.raises(ValueError, match=match):
        model_wrap(BNNet(), "target", update_type=kind, update_kwargs=kwargs)


def test_goal_dict_observations_feed_observation_and_desired_goal():
    """Gymnasium-Robotics' goal dicts: the network reads cat(observation, desired_goal) (a UVFA)."""
    from stride.model.common import split_mask

    obs = {"observation": torch.tensor([[1.0, 2.0]]), "achieved_goal": torch.tensor([[7.0]]),
           "desired_goal": torch.tensor([[3.0]], dtype=torch.float64)}
    x, mask = split_mask(obs)
    assert mask is None and x.dtype == torch.float32
    assert x.tolist() == [[1.0, 2.0, 3.0]]
    with pytest.raises(TypeError, match="'observation' and 'desired_goal' \\(Gymnasium-Robotics'\\), got \\['goal'"):
        split_mask({"goal": torch.zeros(1)})
