"""Demonstration datasets (Minari format): round trip, datasets made by Minari itself, atomic writes, errors."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest

minari = pytest.importorskip("minari")

from stride.data.demo import DemoDataset, load_demo_dataset, stack_episode, write_demo_dataset  # noqa: E402
from stride.utils.errors import ConfigError  # noqa: E402

OBS = gym.spaces.Box(-5.0, 5.0, (3,), np.float32)
ACT = gym.spaces.Discrete(2)


def _episode(rng: np.random.Generator, n: int, truncated: bool = False) -> dict:
    """n transitions whose next_obs[t] == obs[t+1] (one trajectory), ending at the last step."""
    traj = rng.uniform(-1, 1, (n + 1, 3)).astype(np.float32)
    end = np.zeros(n, bool)
    end[-1] = True
    return {"obs": traj[:-1], "action": rng.integers(0, 2, n), "reward": rng.uniform(-1, 1, n).astype(np.float32),
            "next_obs": traj[1:], "terminated": end & (not truncated), "truncated": end & truncated}


def test_round_trip_columns_returns_and_provenance(tmp_path):
    rng = np.random.default_rng(0)
    eps = [_episode(rng, 5), _episode(rng, 3, truncated=True), _episode(rng, 7)]
    out = write_demo_dataset(str(tmp_path / "demo"), eps, OBS, ACT, env_id="CartPole-v1",
                             env_kwargs={"max_episode_steps": 200}, seed=7, extra={"note": "x"})
    assert out == str(tmp_path / "demo") and os.path.isfile(os.path.join(out, "data", "metadata.json"))
    assert sorted(os.listdir(tmp_path)) == ["demo"]  # no temporary left beside it
    ds = load_demo_dataset(out)
    assert isinstance(ds, DemoDataset) and len(ds) == 15
    for key in ("obs", "action", "next_obs", "terminated", "truncated"):
        np.testing.assert_array_equal(ds.columns[key], np.concatenate([e[key] for e in eps]), err_msg=key)
    np.testing.assert_allclose(ds.columns["reward"], np.concatenate([e["reward"] for e in eps]), rtol=1e-6)
    np.testing.assert_array_equal(ds.lengths, [5, 3, 7])
    np.testing.assert_array_equal(ds.starts, [0, 5, 8])
    want = [float(np.sum(e["reward"].astype(np.float64))) for e in eps]
    np.testing.assert_allclose(ds.returns, want, rtol=1e-6)
    np.testing.assert_allclose(ds.meta["returns"], want, rtol=1e-12)  # recorded at write time
    assert (ds.env_id, ds.seed, ds.meta["note"]) == ("CartPole-v1", 7, "x")
    assert ds.env_kwargs == {"max_episode_steps": 200}
    # Minari itself sees the env spec and the episodes
    md = minari.MinariDataset(os.path.join(out, "data"))
    assert md.total_episodes == 3 and md.total_steps == 15
    assert md.env_spec.id == "CartPole-v1" and md.env_spec.max_episode_steps == 200
    # the learners' transitions: done = terminated (a truncated end still bootstraps)
    tr = ds.transitions()
    assert len(tr) == 15 and tr[7]["done"] is False and tr[14]["done"] is True
    np.testing.assert_array_equal(tr[6]["next_obs"], eps[1]["next_obs"][1])


def test_dict_observations_and_box_actions_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    obs_space = gym.spaces.Dict({"observation": gym.spaces.Box(-1, 1, (2,)), "goal": gym.spaces.Box(-1, 1, (1,))})
    act_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    n = 4
    traj = {"observation": rng.uniform(-1, 1, (n + 1, 2)).astype(np.float32),
            "goal": rng.uniform(-1, 1, (n + 1, 1)).astype(np.float32)}
    transitions = [{"obs": {k: v[t] for k, v in traj.items()}, "action": rng.uniform(-1, 1, 2).astype(np.float32),
                    "reward": float(t), "next_obs": {k: v[t + 1] for k, v in traj.items()},
                    "terminated": t == n - 1, "truncated": False} for t in range(n)]
    ep = stack_episode(transitions)
    ds = load_demo_dataset(write_demo_dataset(str(tmp_path / "d"), [ep], obs_space, act_space))
    for k in traj:
        np.testing.assert_array_equal(ds.columns["obs"][k], traj[k][:-1])
        np.testing.assert_array_equal(ds.columns["next_obs"][k], traj[k][1:])
    np.testing.assert_array_equal(ds.columns["action"], ep["action"])
    assert ds.returns.tolist() == [6.0] and ds.env_id is None and ds.seed is None


@pytest.mark.filterwarnings("ignore::UserWarning")  # Minari advises on the optional metadata left out
def test_a_dataset_made_by_minari_itself_loads_by_path_and_by_id(tmp_path, monkeypatch):
    from minari.data_collector import EpisodeBuffer

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "root"))
    obs = np.arange(12, dtype=np.float32).reshape(4, 3)
    buf = EpisodeBuffer(observations=obs, actions=np.array([1, 0, 1]), rewards=np.array([1.0, 2.0, 3.0]),
                        terminations=np.array([False, False, False]), truncations=np.array([False, False, True]))
    minari.create_dataset_from_buffers("elsewhere/cartpole-v0", [buf], observation_space=OBS, action_space=ACT,
                                       algorithm_name="other", description="made by minari")
    for source in ("elsewhere/cartpole-v0", str(tmp_path / "root" / "elsewhere" / "cartpole-v0")):
        ds = load_demo_dataset(source)
        np.testing.assert_array_equal(ds.columns["obs"], obs[:-1])
        np.testing.assert_array_equal(ds.columns["next_obs"], obs[1:])
        assert ds.columns["truncated"].tolist() == [False, False, True]
        assert ds.returns.tolist() == [6.0] and ds.meta == {} and ds.seed is None


def test_bad_paths_and_ids_are_one_line_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "empty_root"))
    with pytest.raises(ConfigError, match="'nope/missing-v0' not found.*local ids: none"):
        load_demo_dataset("nope/missing-v0")
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConfigError, match="is not a Minari dataset"):
        load_demo_dataset(str(tmp_path / "plain"))


def _break(path: str, how: str) -> str:
    """A copy of the dataset at ``path`` whose data or metadata file is truncated or garbage; the
    broken file's path."""
    hdf5, meta = os.path.join(path, "data", "main_data.hdf5"), os.path.join(path, "data", "metadata.json")
    if how == "truncated":
        with open(hdf5, "r+b") as f:
            f.truncate(os.path.getsize(hdf5) // 2)
        return hdf5
    if how == "garbage":
        with open(hdf5, "wb") as f:
            f.write(b"not an HDF5 file " * 64)
        return hdf5
    with open(meta) as f:
        text = f.read()
    with open(meta, "w") as f:
        f.write(text[: len(text) // 2])  # a metadata JSON cut short
    return meta


@pytest.mark.parametrize("how, cause", [
    ("truncated", "OSError: Unable to synchronously open file (truncated file"),
    ("garbage", "OSError: Unable to synchronously open file (file signature not found)"),
    ("metadata", "JSONDecodeError: Unterminated string"),
])
def test_a_corrupt_or_truncated_dataset_names_the_file_and_the_cause(how, cause, tmp_path):
    """Issue 28 item 8: was ``cannot use 'a file': OSError``, exit 1; now the file, the cause, exit 2
    (the one reader: GAIL, BC, SQIL and R2D3 all read through it)."""
    out = write_demo_dataset(str(tmp_path / "d"), [_episode(np.random.default_rng(4), 5)], OBS, ACT)
    broken = _break(out, how)
    with pytest.raises(ConfigError) as caught:
        load_demo_dataset(out)
    text = str(caught.value)
    assert f"demonstration dataset '{out}': cannot read '{broken}': {cause}" in text and "collect_demo" in text
    assert caught.value.exit_code == 2 and len(text.splitlines()) == 1


def test_wrong_env_is_refused(tmp_path):
    ds = load_demo_dataset(write_demo_dataset(str(tmp_path / "d"), [_episode(np.random.default_rng(2), 3)], OBS, ACT,
                                              env_id="CartPole-v1"))
    ds.check_env(OBS, ACT, "CartPole-v1")  # the same env passes
    with pytest.raises(ConfigError, match="recorded on env 'CartPole-v1', this run's env is 'Acrobot-v1'"):
        ds.check_env(OBS, ACT, "Acrobot-v1")
    with pytest.raises(ConfigError, match="action space Discrete\\(2\\), this run's env has Discrete\\(3\\)"):
        ds.check_env(OBS, gym.spaces.Discrete(3))
    with pytest.raises(ConfigError, match="observation space"):
        ds.check_env(gym.spaces.Box(-5.0, 5.0, (4,), np.float32), ACT)


def test_never_overwrites_and_refuses_half_episodes(tmp_path):
    rng = np.random.default_rng(3)
    out = write_demo_dataset(str(tmp_path / "d"), [_episode(rng, 2)], OBS, ACT)
    with pytest.raises(ConfigError, match="already exists"):
        write_demo_dataset(out, [_episode(rng, 2)], OBS, ACT)
    half = _episode(rng, 4)
    half["terminated"][-1] = False
    with pytest.raises(ValueError, match="episode 0 is not one whole episode"):
        write_demo_dataset(str(tmp_path / "half"), [half], OBS, ACT)
    assert sorted(os.listdir(tmp_path)) == ["d"]


def test_a_write_that_fails_midway_leaves_nothing(tmp_path, monkeypatch):
    real = minari.create_dataset_from_buffers

    def crash(*args, **kwargs):
        real(*args, **kwargs)  # the files are there, in the temporary folder
        raise KeyboardInterrupt  # the process is interrupted before the dataset is renamed into place

    monkeypatch.setattr(minari, "create_dataset_from_buffers", crash)
    with pytest.raises(KeyboardInterrupt):
        write_demo_dataset(str(tmp_path / "d"), [_episode(np.random.default_rng(4), 3)], OBS, ACT)
    assert os.listdir(tmp_path) == []
    assert "MINARI_DATASETS_PATH" not in os.environ or os.environ["MINARI_DATASETS_PATH"] != str(tmp_path)


def test_episode_seeds_go_to_minaris_episode_metadata(tmp_path):
    import minari

    rng = np.random.default_rng(1)
    eps = [_episode(rng, 2), _episode(rng, 3)]
    out = write_demo_dataset(str(tmp_path / "d"), eps, OBS, ACT, episode_seeds=[11, None])
    meta = list(minari.MinariDataset(os.path.join(out, "data")).storage.get_episode_metadata([0, 1]))
    assert meta[0]["seed"] == 11 and "seed" not in meta[1]
    with pytest.raises(ValueError, match="episode_seeds: one per episode, got 1 for 2 episodes"):
        write_demo_dataset(str(tmp_path / "e"), eps, OBS, ACT, episode_seeds=[11])
