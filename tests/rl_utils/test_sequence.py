"""R2D2's sequence math against hand-computed numbers and a slow reference written here."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stride.rl_utils import (inv_value_rescale, q_sequence_td_error, sequence_nstep_return, sequence_priority,
                             value_rescale)


def test_value_rescale_hand_values():
    x = torch.tensor([0.0, 3.0, -8.0, 99.0])
    # h(3) = sqrt(4) - 1 + 0.003; h(-8) = -(sqrt(9) - 1) - 0.008; h(99) = sqrt(100) - 1 + 0.099
    expect = torch.tensor([0.0, 1.003, -2.008, 9.099])
    assert torch.allclose(value_rescale(x), expect, atol=1e-6)
    assert torch.allclose(inv_value_rescale(expect), x, atol=2e-5)


def test_inv_value_rescale_is_the_inverse_over_many_scales():
    x = torch.tensor([-1e4, -300.0, -1.5, -1e-3, 0.0, 2e-3, 0.7, 42.0, 5e3], dtype=torch.float64)
    assert torch.allclose(inv_value_rescale(value_rescale(x)), x, rtol=1e-9, atol=1e-9)
    assert torch.allclose(value_rescale(inv_value_rescale(x)), x, rtol=1e-9, atol=1e-9)


def _reference_nstep(reward, done, last, mask, gamma, n):
    """One row at a time, for one sequence (lists)."""
    steps = len(reward)
    out = []
    for t in range(steps):
        if not mask[t] or last[t]:
            out.append(None)
            continue
        ret, k, term, known = 0.0, 0, False, True
        for j in range(n):
            if t + j >= steps:
                known = False
                break
            ret += gamma ** j * reward[t + j]
            k += 1
            if done[t + j]:
                term = True
                break
            if t + j + 1 < steps and last[t + j + 1]:
                break
        if not known or (not term and t + k >= steps):
            out.append(None)
        else:
            out.append((ret, gamma ** k, term, t + k))
    return out


def _check_against_reference(reward, done, last, mask, gamma, n):
    cols = [torch.tensor(np.asarray(c)).unsqueeze(1) for c in (reward, done, last, mask)]
    got = sequence_nstep_return(cols[0].float(), cols[1], cols[2], cols[3], gamma, n)
    ref = _reference_nstep(reward, done, last, mask, gamma, n)
    for t, r in enumerate(ref):
        assert bool(got.valid[t, 0]) == (r is not None), t
        if r is not None:
            assert got.reward[t, 0].item() == pytest.approx(r[0], rel=1e-6, abs=1e-5)
            assert got.value_gamma[t, 0].item() == pytest.approx(r[1], rel=1e-6)
            assert bool(got.done[t, 0]) == r[2] and int(got.boot[t, 0]) == r[3], t


def test_nstep_hand_values_truncated_episode_inside_a_padded_sequence():
    # rows 0..3 real steps, row 4 the final observation (truncation), rows 5..6 padding
    reward = [1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0]
    done = [False] * 7
    last = [False, False, False, False, True, False, False]
    mask = [True] * 5 + [False] * 2
    got = sequence_nstep_return(torch.tensor(reward).unsqueeze(1), torch.tensor(done).unsqueeze(1),
                                torch.tensor(last).unsqueeze(1), torch.tensor(mask).unsqueeze(1), 0.5, 3)
    # row 0: 1 + 0.5*2 + 0.25*3 = 2.75, bootstrap from row 3 with 0.125
    # row 2: 3 + 0.5*4 = 5 (the window stops at the final observation), bootstrap from row 4 with 0.25
    assert got.reward[:4, 0].tolist() == pytest.approx([2.75, 2 + 1.5 + 1.0, 5.0, 4.0])
    assert got.value_gamma[:4, 0].tolist() == pytest.approx([0.125, 0.125, 0.25, 0.5])
    assert got.boot[:4, 0].tolist() == [3, 4, 4, 4]
    assert got.valid[:, 0].tolist() == [True] * 4 + [False] * 3
    assert not got.done.any()


def test_nstep_termination_never_bootstraps_and_rows_past_the_sequence_are_not_targets():
    reward = [1.0, 1.0, 1.0, 0.0, 0.0]
    done = [False, False, True, False, False]
    last = [False, False, False, True, False]
    mask = [True, True, True, True, False]
    _check_against_reference(reward, done, last, mask, 0.9, 5)
    got = sequence_nstep_return(*(torch.tensor(c).unsqueeze(1) for c in (reward, done, last, mask)), 0.9, 5)
    assert got.done[:3, 0].all() and got.reward[0, 0].item() == pytest.approx(1 + 0.9 + 0.81)
    # mid-episode: the last n-1 rows reach past the sequence
    mid = sequence_nstep_return(torch.ones(6, 1), torch.zeros(6, 1, dtype=torch.bool), torch.zeros(6, 1, dtype=torch.bool),
                                torch.ones(6, 1, dtype=torch.bool), 0.9, 3)
    assert mid.valid[:, 0].tolist() == [True, True, True, False, False, False]


@pytest.mark.parametrize("seed", range(20))
def test_nstep_matches_the_slow_reference_on_random_episodes(seed):
    rng = np.random.default_rng(seed)
    steps, n, gamma = int(rng.integers(3, 12)), int(rng.integers(1, 6)), 0.9
    real = int(rng.integers(1, steps + 1))  # rows before padding, the last may be the final observation
    ends = rng.random() < 0.7 and real >= 2
    reward = rng.standard_normal(steps).round(2).tolist()
    done = [False] * steps
    last = [False] * steps
    mask = [t < real for t in range(steps)]
    if ends:
        last[real - 1] = True
        reward[real - 1] = 0.0
        done[real - 2] = bool(rng.random() < 0.5)
    for t in range(real, steps):
        reward[t] = 0.0
    _check_against_reference(reward, done, last, mask, gamma, n)


def test_td_error_hand_values_double_q_with_rescale_and_is_weight():
    # T=3, B=1, A=2: rows 0, 1 learn; nstep=1, gamma=0.5; row 2 is a bootstrap row only
    q = torch.tensor([[[1.0, 2.0]], [[3.0, 0.5]], [[0.0, 4.0]]], requires_grad=True)
    q_target = torch.tensor([[[0.0, 0.0]], [[10.0, 20.0]], [[30.0, 40.0]]])
    action = torch.tensor([[1], [0], [0]])
    reward = torch.tensor([[1.0], [2.0], [0.0]])
    zeros = torch.zeros(3, 1, dtype=torch.bool)
    nstep = sequence_nstep_return(reward, zeros, zeros, torch.ones(3, 1, dtype=torch.bool), 0.5, 1)
    train = torch.ones(3, 1, dtype=torch.bool)
    loss, td = q_sequence_td_error(q, q_target, action, nstep, train, torch.tensor([2.0]), rescale=False)
    # row 0: online argmax at row 1 is action 0 -> q_target 10 -> target 1 + 5 = 6; q_sa = 2 -> td 4
    # row 1: online argmax at row 2 is action 1 -> q_target 40 -> target 2 + 20 = 22; q_sa = 3 -> td 19
    assert td[:, 0].tolist() == pytest.approx([4.0, 19.0, 0.0])
    assert loss.item() == pytest.approx(2.0 * 0.5 * (16 + 361) / 2)
    h = lambda x: math.copysign(math.sqrt(abs(x) + 1) - 1, x) + 1e-3 * x  # noqa: E731
    h_inv = lambda y: inv_value_rescale(torch.tensor(y, dtype=torch.float64)).item()  # noqa: E731
    _, td_r = q_sequence_td_error(q, q_target, action, nstep, train, None, rescale=True)
    assert td_r[0, 0].item() == pytest.approx(abs(2.0 - h(1 + 0.5 * h_inv(10.0))), rel=1e-5)
    loss.backward()
    assert q.grad[2].abs().sum() == 0  # a bootstrap-only row gets no gradient


def test_sequence_priority_mixes_max_and_mean_over_the_mask():
    td = torch.tensor([[1.0, 5.0], [3.0, 0.0], [8.0, 0.0]])
    mask = torch.tensor([[True, False], [True, False], [False, False]])
    p = sequence_priority(td, mask, eta=0.9)
    assert p.tolist() == pytest.approx([0.9 * 3.0 + 0.1 * 2.0, 0.0])
    assert sequence_priority(td, torch.ones_like(mask), eta=0.0).tolist() == pytest.approx([4.0, 5.0 / 3])
