"""The Atari preset (stride.zoo.atari.make_atari_env / AtariEnv) on real ALE games: each wrapper's job."""

from __future__ import annotations

import re
import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ale_py")
pytest.importorskip("cv2")  # Gymnasium's AtariPreprocessing resizes with OpenCV (part of the atari extra)

from stride.zoo.atari import AtariEnv, ClipRewardKeepScore, EpisodicLife, FireReset, make_atari_env  # noqa: E402
from stride.zoo.atari.envs import atari_env_id  # noqa: E402


def _wrappers(env: gym.Env) -> list:
    out = []
    while isinstance(env, gym.Wrapper):
        out.append(type(env))
        env = env.env
    return out


def test_ids():
    assert atari_env_id("pong") == "ALE/Pong-v5"
    assert atari_env_id("spaceinvaders") == "ALE/SpaceInvaders-v5"
    assert atari_env_id("ALE/Breakout-v5") == "ALE/Breakout-v5"


def test_shape_dtype_and_wrapper_order():
    env = make_atari_env("breakout", train=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    assert env.observation_space.shape == (4, 84, 84) and env.observation_space.dtype == np.uint8
    kinds = _wrappers(env)
    assert kinds.index(ClipRewardKeepScore) < kinds.index(gym.wrappers.FrameStackObservation) \
        < kinds.index(FireReset) < kinds.index(EpisodicLife) < kinds.index(gym.wrappers.AtariPreprocessing)
    base = env.unwrapped
    assert base._frameskip == 1  # the skipping (with max-pooling) is AtariPreprocessing's
    pre = next(w for w in _iter(env) if isinstance(w, gym.wrappers.AtariPreprocessing))
    assert pre.frame_skip == 4 and pre.noop_max == 30 and pre.screen_size == (84, 84)
    env.close()


def _iter(env):
    while isinstance(env, gym.Wrapper):
        yield env
        env = env.env


def test_episodic_life_only_in_training_and_fire_only_where_needed():
    assert EpisodicLife not in _wrappers(make_atari_env("breakout", train=False))
    assert EpisodicLife in _wrappers(make_atari_env("breakout", train=True))
    assert FireReset in _wrappers(make_atari_env("breakout", train=False))
    # the rule of SB3 and baselines: games whose action 1 is FIRE (Pong and Space Invaders too); Freeway has none
    assert FireReset not in _wrappers(make_atari_env("freeway", train=False))
    assert AtariEnv.evaluator_env_cfg({"env_id": "ALE/Pong-v5", "train": True})["train"] is False


def test_noop_reset_is_bounded_by_noop_max():
    """AtariPreprocessing takes 1..noop_max no-ops on reset: the frame number after reset says how many."""
    env = make_atari_env("pong", train=False, noop_max=30, clip_reward=False)
    counts = set()
    for seed in range(12):
        env.reset(seed=seed)
        counts.add(env.unwrapped.ale.getEpisodeFrameNumber())
    assert all(1 <= c <= 30 + 2 * 4 for c in counts)  # no-ops (one frame each) + FireReset's two steps
    assert len(counts) > 1  # random counts
    env.close()


def test_max_pool_over_the_last_two_frames():
    env = gym.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.0)
    pre = gym.wrappers.AtariPreprocessing(env, noop_max=0, frame_skip=4, screen_size=84)
    pre.reset(seed=0)
    obs, *_ = pre.step(1)
    # AtariPreprocessing keeps the last two frames' grayscale screens and returns their max, resized
    a, b = pre.obs_buffer
    assert a.shape == b.shape == (210, 160)
    import cv2

    want = cv2.resize(np.maximum(a, b), (84, 84), interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(obs, want)
    env.close()


def test_episodic_life_ends_on_life_loss_and_keeps_playing():
    env = AtariEnv(cfg=dict(env_id="ALE/Breakout-v5", train=True, repeat_action_probability=0.0))
    env.seed(0)
    env.reset()
    ends = []
    for _ in range(5000):
        ts = env.step(env.random_action())
        if ts.done:
            ends.append((ts.info["game_over"], ts.info["lives"]))
            if ts.info["game_over"]:
                break
            env.reset()  # not a new game: the lives go on counting down
    assert [lives for _, lives in ends] == [4, 3, 2, 1, 0]
    assert [over for over, _ in ends] == [False] * 4 + [True]
    env.close()


def test_whole_games_when_not_training():
    env = AtariEnv(cfg=dict(env_id="ALE/Breakout-v5", train=False, repeat_action_probability=0.0))
    env.seed(0)
    env.reset()
    for _ in range(20000):
        ts = env.step(env.random_action())
        if ts.done:
            break
    assert ts.done and ts.info["lives"] == 0 and "game_over" not in ts.info
    env.close()


def test_fire_reset_launches_the_ball_in_breakout():
    """After FireReset the ball is in play: a few NOOP steps change the screen (without FIRE they don't)."""
    fired = make_atari_env("breakout", train=False, noop_max=0, clip_reward=False)
    obs, _ = fired.reset(seed=0)
    moved = [not np.array_equal(fired.step(0)[0][-1], obs[-1]) for _ in range(5)]
    assert any(moved)
    fired.close()
    raw = gym.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.0)
    still = gym.wrappers.AtariPreprocessing(raw, noop_max=0)
    obs0, _ = still.reset(seed=0)
    assert all(np.array_equal(still.step(0)[0], obs0) for _ in range(5))
    still.close()


def test_rewards_clipped_while_the_return_is_the_game_score():
    env = AtariEnv(cfg=dict(env_id="ALE/SpaceInvaders-v5", train=False, repeat_action_probability=0.0,
                            max_episode_steps=600))
    env.seed(0)
    env.reset()
    clipped = 0.0
    for _ in range(600):
        ts = env.step(env.random_action())
        assert float(ts.reward) in (-1.0, 0.0, 1.0)
        clipped += float(ts.reward)
        if ts.done:
            break
    assert ts.done and ts.info["truncated"] or ts.info["terminated"]
    score = ts.info["eval_episode_return"]
    assert "episode_score" not in ts.info
    # Space Invaders pays 5..30 per invader: the score is far above the count of rewarded steps
    assert clipped > 0 and score > clipped and score % 5 == 0
    env.close()


def test_missing_ale_py_is_one_line(monkeypatch):
    from stride.utils.extras import MissingExtraError, install_hint

    monkeypatch.setitem(__import__("sys").modules, "ale_py", None)  # import ale_py: ModuleNotFoundError
    with pytest.raises(MissingExtraError, match=re.escape(f"Atari envs need ale_py: {install_hint('atari')}")):
        make_atari_env("pong", train=True)


def test_seeded_resets_do_not_reload_the_rom_and_stay_reproducible(monkeypatch):
    """ale-py reloads the ROM on every seeded reset (~85 ms); ReseedWithoutReload does it once per
    env, and the same seeds still give the same episodes."""
    from ale_py.env import AtariEnv as AleEnv

    loads, resets = [], []
    load_game = AleEnv.load_game
    monkeypatch.setattr(AleEnv, "load_game", lambda self: (loads.append(1), load_game(self))[1])

    def play(seed: int) -> list:
        env = AtariEnv(cfg=dict(env_id="ALE/Breakout-v5", train=True, max_episode_steps=40))
        env.seed(seed)
        frames = [env.reset()]
        resets.append(1)
        rng = np.random.default_rng(0)
        for _ in range(200):
            ts = env.step(int(rng.integers(4)))
            frames.append(ts.obs)
            if ts.done:
                frames.append(env.reset())
                resets.append(1)
        env.close()
        return frames

    a = play(1)
    assert len(resets) >= 5 and len(loads) == 2  # at construction and the first seeded reset, not one per episode
    b, c = play(1), play(2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)) and len(a) == len(b)
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
