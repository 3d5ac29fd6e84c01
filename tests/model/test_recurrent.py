"""stride.model.DRQN: one step and a sequence agree, the flat state round-trips, bad input is one line."""

from __future__ import annotations

import pytest
import torch

from stride.model import DRQN
from stride.utils.errors import ConfigError
from stride.utils.registry import MODEL_REGISTRY


@pytest.mark.parametrize("rnn_type,layers", [("lstm", 1), ("lstm", 2), ("gru", 1)])
def test_a_sequence_equals_its_steps_one_by_one(rnn_type, layers):
    torch.manual_seed(0)
    m = DRQN(3, 4, encoder_hidden_size_list=[8], hidden_size=5, rnn_type=rnn_type, rnn_layer_num=layers)
    assert m.state_size == (2 if rnn_type == "lstm" else 1) * layers * 5
    obs = torch.randn(6, 2, 3)
    state = torch.randn(2, m.state_size)
    seq = m(obs, state)
    assert seq["logit"].shape == (6, 2, 4) and seq["next_state"].shape == (2, m.state_size)
    s = state
    for t in range(6):
        out = m(obs[t], s)
        assert out["logit"].shape == (2, 4)
        assert torch.allclose(out["logit"], seq["logit"][t], atol=1e-6)
        s = out["next_state"]
    assert torch.allclose(s, seq["next_state"], atol=1e-6)


def test_no_state_is_the_zero_initial_state_and_the_model_is_registered():
    m = MODEL_REGISTRY.get("drqn")(2, 2, encoder_hidden_size_list=[4], hidden_size=3)
    obs = torch.randn(4, 2)
    assert torch.equal(m(obs)["logit"], m(obs, m.initial_state(4))["logit"])
    assert torch.equal(m.initial_state(4), torch.zeros(4, 6))


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ConfigError, match="unknown rnn_type 'rnn'; valid choices: lstm, gru"):
        DRQN(2, 2, rnn_type="rnn")
    with pytest.raises(ConfigError, match="positive int action_shape"):
        DRQN(2, 0)
    m = DRQN(2, 2, hidden_size=3)
    with pytest.raises(ValueError, match=r"state must be \(batch=4, state_size=6\), got \(4, 5\)"):
        m(torch.zeros(4, 2), torch.zeros(4, 5))
