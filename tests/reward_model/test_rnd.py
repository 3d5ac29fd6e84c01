"""RND: observation and intrinsic-reward normalisation by hand, training, estimate's column, exact state."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from stride.reward_model import RndRewardModel, create_reward_model
from stride.reward_model.rnd import running_returns
from stride.utils.errors import ConfigError

OBS = 2


def make(seed: int = 0, **cfg) -> RndRewardModel:
    return RndRewardModel(dict(obs_shape=OBS, hidden_size_list=[8, 8], output_size=4, batch_size=2, **cfg), seed=seed)


def _samples(next_obs, env_ids, reward=0.0):
    return [{"obs": np.zeros(OBS, np.float32), "next_obs": np.asarray(o, np.float32), "reward": reward, "env_id": e}
            for o, e in zip(next_obs, env_ids)]


def _constant_error(model: RndRewardModel, error: float) -> None:
    """Target outputs 0, predictor outputs sqrt(error) on every output: every obs's error is ``error``."""
    with torch.no_grad():
        model.networks.target[-1].weight.zero_()
        model.networks.target[-1].bias.zero_()
        model.networks.predictor[-1].weight.zero_()
        model.networks.predictor[-1].bias.fill_(error ** 0.5)


def test_registered_and_built_by_name():
    m = create_reward_model(dict(type="rnd", obs_shape=OBS))
    assert isinstance(m, RndRewardModel) and m.reward_key == "intrinsic_reward"
    assert m.cfg.clear_buffer_per_iters == 1  # trains on fresh data, as the paper


def test_observation_normalisation_by_hand_and_clipped_at_5():
    m = make()
    m.collect_data(_samples([[0, 0], [2, 4], [4, 8]], [0, 0, 0]))
    norm = m.networks.obs_norm
    np.testing.assert_allclose(norm.mean.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(norm.var.numpy(), [8 / 3, 32 / 3])
    x = norm.normalize(torch.tensor([[4.0, 0.0], [100.0, -100.0]]))
    np.testing.assert_allclose(x.numpy(), [[2 / (8 / 3) ** 0.5, -4 / (32 / 3) ** 0.5], [5.0, -5.0]], rtol=1e-6)


def test_running_returns_by_hand_per_env_and_carried():
    carry = {1: 2.0}
    # env 0: 1, 0.5 * 1 + 3 = 3.5, 0.5 * 3.5 + 4 = 5.75 ; env 1 continues from 2: 0.5 * 2 + 2 = 3
    assert running_returns([1, 2, 3, 4], [0, 1, 0, 0], 0.5, carry) == pytest.approx([1, 3, 3.5, 5.75])
    assert carry == {0: 5.75, 1: 3.0}


def test_intrinsic_reward_divided_by_the_std_of_the_non_episodic_return():
    m = make(intrinsic_discount_factor=0.5)
    _constant_error(m, 1.0)
    # error 1 everywhere; envs 0 and 1 interleaved: returns 1, 1, 1.5, 1.5, 1.75 (env 0 thrice)
    first = _samples(np.zeros((5, OBS)), [0, 1, 0, 1, 0])
    first[2]["done"] = True  # an episode end does not reset the return (non-episodic)
    m.collect_data(first)
    # mean 1.35, var ((.35^2) * 2 + (.15^2) * 2 + .4^2) / 5 = 0.09: std 0.3
    assert m.networks.return_stats.var.item() == pytest.approx(0.09)
    out = m.estimate(_samples(np.ones((2, OBS)), [0, 1]))
    assert [s["intrinsic_reward"] for s in out] == pytest.approx([1 / 0.3, 1 / 0.3], rel=1e-6)
    # the next collect continues each env's stream: env 0 0.5 * 1.75 + 1 = 1.875, env 1 0.5 * 1.5 + 1 = 1.75
    m.collect_data(_samples(np.zeros((2, OBS)), [0, 1]))
    allr = np.array([1, 1, 1.5, 1.5, 1.75, 1.875, 1.75])
    assert m.networks.return_stats.var.item() == pytest.approx(allr.var())


def test_estimate_adds_a_column_and_leaves_reward_alone():
    m = make()
    batch = _samples([[0, 1], [1, 0], [3, 3]], [0, 0, 1], reward=0.25)
    m.collect_data(batch)
    out = m.estimate(batch)
    assert all("intrinsic_reward" not in s for s in batch)
    assert [s["reward"] for s in out] == [0.25] * 3
    bonus = np.array([s["intrinsic_reward"] for s in out])
    assert (bonus > 0).all()
    columns = {"next_obs": np.stack([s["next_obs"] for s in batch]), "reward": np.full(3, 0.25)}
    np.testing.assert_allclose(m.estimate(columns)["intrinsic_reward"], bonus, rtol=1e-6)


def test_training_lowers_the_error_on_seen_observations_only_where_seen():
    m = make(learning_rate=1e-2, epoch_per_collect=20)
    rng = np.random.default_rng(0)
    seen, unseen = rng.normal(size=(32, OBS)), rng.normal(size=(32, OBS)) + 6.0
    m.collect_data(_samples(seen, [0] * 32))
    before_seen = m.networks.error(torch.tensor(seen, dtype=torch.float32)).mean().item()
    m.train()
    after_seen = m.networks.error(torch.tensor(seen, dtype=torch.float32)).mean().item()
    after_unseen = m.networks.error(torch.tensor(unseen, dtype=torch.float32)).mean().item()
    assert after_seen < 0.5 * before_seen
    assert after_unseen > after_seen  # novelty: what was not trained on stays surprising
    target_before = [p.clone() for p in m.networks.target.parameters()]
    m.train()
    assert all(torch.equal(a, b) for a, b in zip(target_before, m.networks.target.parameters()))  # target is fixed


def test_state_dict_round_trip_is_exact_through_a_weights_only_checkpoint():
    a = make(seed=1)
    data = _samples(np.random.default_rng(1).normal(size=(6, OBS)), [0, 1, 0, 1, 0, 1])
    a.collect_data(data)
    a.train()
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    b = make(seed=2)  # other networks and RNG until loaded
    b.load_state_dict(torch.load(buf, weights_only=True))
    for m in (a, b):  # the same future: kept data, statistics, each env's return, minibatch order
        m.train()
        m.collect_data(data)
        m.train()
    ra = [s["intrinsic_reward"] for s in a.estimate(data)]
    assert ra == [s["intrinsic_reward"] for s in b.estimate(data)]
    sa, sb = a.state_dict(), b.state_dict()
    assert sa["return_values"] == sb["return_values"] and sa["return_env_ids"] == [0, 1]
    for k, v in sa["networks"].items():
        assert torch.equal(v, sb["networks"][k]), k


def test_clear_data_drops_the_kept_observations():
    m = make()
    m.collect_data(_samples(np.ones((3, OBS)), [0, 0, 0]))
    assert len(m.state_dict()["data"]) == 1
    m.clear_data()
    assert m.state_dict()["data"] == []
    before = [p.clone() for p in m.networks.predictor.parameters()]
    m.train()  # nothing kept: nothing learnt
    assert all(torch.equal(a, b) for a, b in zip(before, m.networks.predictor.parameters()))


def test_bad_input_is_one_clear_error():
    m = make()
    with pytest.raises(ConfigError, match="env_id"):
        m.collect_data([{"next_obs": np.zeros(OBS, np.float32)}])
    with pytest.raises(ConfigError, match="obs_shape"):
        RndRewardModel(dict(obs_shape="984"))
    with pytest.raises(ConfigError, match="reward_model.learning_rate"):
        RndRewardModel(dict(obs_shape=OBS, learning_rate=-1.0))
