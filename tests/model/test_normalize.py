"""RunningNorm: the statistics equal NumPy's over the same stream; normalize clips; state_dict round-trips."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stride.model.common.normalize import RunningNorm


def test_statistics_match_numpy_over_the_stream():
    rng = np.random.default_rng(0)
    norm = RunningNorm(3)
    chunks = [rng.normal(5.0, 3.0, size=(n, 3)) for n in (1, 7, 1, 64, 3)]  # batches of one: Welford's case
    for c in chunks:
        norm.update(torch.as_tensor(c))
    stream = np.concatenate(chunks)
    np.testing.assert_allclose(norm.mean.numpy(), stream.mean(0), rtol=1e-12)
    np.testing.assert_allclose(norm.var.numpy(), stream.var(0), rtol=1e-12)
    assert norm.count.item() == len(stream) and norm.mean.dtype == torch.float64


def test_hand_checked_values_and_clip():
    norm = RunningNorm(1, clip=1.5, eps=1e-8)
    norm.update(torch.tensor([[1.0], [3.0]]))  # mean 2, var 1
    norm.update(torch.tensor([[5.0]]))  # stream 1, 3, 5: mean 3, var 8/3
    assert norm.mean.item() == pytest.approx(3.0) and norm.var.item() == pytest.approx(8 / 3)
    out = norm(torch.tensor([[3.0], [4.0], [100.0], [-100.0]]))
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.squeeze(1).numpy(), [0.0, 1 / np.sqrt(8 / 3 + 1e-8), 1.5, -1.5], rtol=1e-6)


def test_identity_before_any_update_and_forward_never_updates():
    norm = RunningNorm((2,))
    x = torch.tensor([[0.5, -2.0]])
    torch.testing.assert_close(norm(x), x)
    assert norm.count.item() == 0


def test_state_dict_round_trip():
    a, b = RunningNorm(4), RunningNorm(4)
    a.update(torch.randn(10, 4) * 3 + 1)
    b.load_state_dict(a.state_dict())
    assert set(a.state_dict()) == {"mean", "var", "count"}
    for k, v in a.state_dict().items():
        assert torch.equal(v, b.state_dict()[k])
