"""The standard Atari preset (Mnih et al. 2015, as in SB3's ``AtariWrapper`` and CleanRL's
``dqn_atari``), built on Gymnasium's public wrappers where they do exactly the job.

:func:`make_atari_env` stacks, from the emulator out:

1. ``ALE/<Game>-v5`` with ``frameskip=1`` (the skipping is done below, with max-pooling) and the
   ``repeat_action_probability`` the config names (v5's sticky actions: 0.25; the Nature DQN
   setting: 0.0), seeded episodes without a ROM reload each (:class:`ReseedWithoutReload`);
2. ``gymnasium.wrappers.AtariPreprocessing``: up to ``noop_max`` (30) no-ops on reset, frame skip
   4 with the max over the last two frames, 84x84 grayscale uint8 (its own ``terminal_on_life_loss``
   stays off: it resets the whole game at a life loss, see :class:`EpisodicLife`);
3. :class:`EpisodicLife`, for training only: a lost life ends the episode for learning while the game
   goes on;
4. :class:`FireReset`, where the game's action 1 is FIRE (Breakout, Pong, ...): FIRE after each reset;
5. ``gymnasium.wrappers.FrameStackObservation``: the last 4 frames, channel-first ``(4, 84, 84)`` uint8;
6. :class:`ClipRewardKeepScore`: rewards clipped to their sign for learning, the raw score kept for
   the reported episode return (Gymnasium's ``ClipReward`` loses it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, SupportsFloat, Tuple

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ...config.view import setting
from ...envs.base_env import BaseEnvTimestep
from ...envs.gymnasium_env import GymnasiumConfig, GymnasiumEnv
from ...envs.replay import RecordEpisodes
from ...utils.errors import ConfigError
from ...utils.extras import import_extra
from ...utils.registry import ENV_REGISTRY
from .vector_env import make_atari_vector_env

#: an Atari frame (or stack of frames): uint8 pixels
Frame = npt.NDArray[np.uint8]
#: the Gymnasium step result of a preprocessed Atari env
_Step = Tuple[Frame, SupportsFloat, bool, bool, Dict[str, object]]
#: what a Gymnasium ``reset`` takes as ``options`` and returns as ``info``
Info = Dict[str, object]


def _ale(env: gym.Env[Any, Any]) -> Any:
    """The ``ale_py.ALEInterface`` under ``env`` (its ``lives()``, ``act()``...)."""
    return getattr(env.unwrapped, "ale")


class ReseedWithoutReload(gym.Wrapper[Frame, int, Frame, int]):
    """A seeded reset after the first reseeds the env's NumPy RNG (the no-op counts) and restarts
    the game without reloading the ROM: ale-py's ``reset(seed=...)`` reloads the ROM (~85 ms, as
    long as ~150 agent steps), and Stride's env managers seed every episode. The ALE's own RNG
    (sticky actions) is seeded at the first reset and goes on from there, so a run stays a
    function of its seeds. Gymnasium has no such wrapper."""

    def __init__(self, env: gym.Env[Frame, int]) -> None:
        super().__init__(env)
        self._loaded = False

    def reset(self, *, seed: Optional[int] = None, options: Optional[Info] = None) -> Tuple[Frame, Info]:
        if seed is None or not self._loaded:
            self._loaded = self._loaded or seed is not None
            return self.env.reset(seed=seed, options=options)
        self.env.unwrapped.np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
        return self.env.reset(seed=None, options=options)


class EpisodicLife(gym.Wrapper[Frame, int, Frame, int]):
    """A lost life ends the episode (``terminated``) while the game goes on: the next ``reset``
    after a life loss takes one no-op step instead of restarting the game, so that the agent still
    sees the later stages of a game (DeepMind's ``EpisodicLifeEnv``). Gymnasium has no such
    wrapper: ``AtariPreprocessing(terminal_on_life_loss=True)`` ends the episode too, but the next
    reset restarts the game. For training only; the evaluator plays whole games.

    Every step that ends an episode carries ``info['game_over']``: False at a life loss, True at
    the real end of the game.
    """

    def __init__(self, env: gym.Env[Frame, int]) -> None:
        super().__init__(env)
        self._lives = 0
        self._game_over = True

    def step(self, action: int) -> _Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._game_over = terminated or truncated
        lives = int(_ale(self.env).lives())
        life_lost = 0 < lives < self._lives
        self._lives = lives
        if life_lost or self._game_over:
            info = dict(info, game_over=self._game_over)
        return obs, reward, terminated or life_lost, truncated, info

    def reset(self, *, seed: Optional[int] = None, options: Optional[Info] = None) -> Tuple[Frame, Info]:
        if self._game_over:
            obs, info = self.env.reset(seed=seed, options=options)
        else:  # after a life loss: go on playing from where it stopped
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:  # (rare) the game ended within the no-op step
                obs, info = self.env.reset(seed=seed, options=options)
        self._game_over = False
        self._lives = int(_ale(self.env).lives())
        return obs, info


class FireReset(gym.Wrapper[Frame, int, Frame, int]):
    """Press FIRE (action 1), then action 2, after each reset: games like Breakout stand still
    until FIRE is pressed (after a lost life too, with :class:`EpisodicLife` below this wrapper).
    Gymnasium has no such wrapper. Use it only on games whose action 1 is FIRE
    (:func:`needs_fire_reset`)."""

    def reset(self, *, seed: Optional[int] = None, options: Optional[Info] = None) -> Tuple[Frame, Info]:
        self.env.reset(seed=seed, options=options)
        for action in (1, 2):
            obs, _, terminated, truncated, info = self.env.step(action)
            if terminated or truncated:
                obs, info = self.env.reset(seed=seed, options=options)
        return obs, info


def needs_fire_reset(env: gym.Env[Frame, int]) -> bool:
    """Whether the game's action 1 is FIRE (SB3's and baselines' rule for :class:`FireReset`)."""
    meanings = list(getattr(env.unwrapped, "get_action_meanings")())
    return len(meanings) >= 3 and meanings[1] == "FIRE"


class ClipRewardKeepScore(gym.Wrapper[Frame, int, Frame, int]):
    """Rewards clipped to their sign (-1, 0, 1) for learning, while the raw score of the episode is
    kept: the step that ends an episode carries ``info['episode_score']``, the sum of the unclipped
    rewards since the last reset, which :class:`AtariEnv` reports as ``eval_episode_return``.
    Gymnasium's ``ClipReward`` clips to a range and drops the raw reward."""

    def __init__(self, env: gym.Env[Frame, int]) -> None:
        super().__init__(env)
        self._score = 0.0

    def step(self, action: int) -> _Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        raw = float(reward)
        self._score += raw
        if terminated or truncated:
            info = dict(info, episode_score=self._score)
        return obs, float(np.sign(raw)), terminated, truncated, info

    def reset(self, *, seed: Optional[int] = None, options: Optional[Info] = None) -> Tuple[Frame, Info]:
        self._score = 0.0
        return self.env.reset(seed=seed, options=options)


def atari_env_id(game: str) -> str:
    """``'pong'`` or ``'Pong'`` or ``'ALE/Pong-v5'`` -> ``'ALE/Pong-v5'``."""
    if "/" in game or game.endswith(("-v5", "-v4", "-v0")):
        return game
    names = {"spaceinvaders": "SpaceInvaders", "montezumarevenge": "MontezumaRevenge"}
    name = names.get(game.lower(), game[:1].upper() + game[1:])
    return f"ALE/{name}-v5"


def make_atari_env(game: str, train: bool, *, noop_max: int = 30, frame_skip: int = 4, screen_size: int = 84,
                   frame_stack: int = 4, clip_reward: bool = True, repeat_action_probability: float = 0.25,
                   max_episode_steps: Optional[int] = None, **make_kwargs: object) -> gym.Env[Frame, int]:
    """The standard Atari preset (the module docstring lists the wrappers, in order).

    ``game``: a Gymnasium id (``'ALE/Pong-v5'``) or a game name (``'pong'``, ``'Breakout'``).
    ``train``: end an episode at each lost life (:class:`EpisodicLife`); the evaluator's env has it
    off and plays whole games. Observations are ``(frame_stack, screen_size, screen_size)`` uint8;
    rewards are clipped to their sign when ``clip_reward``, the raw game score of an episode is
    ``info['episode_score']`` at its last step. ``max_episode_steps`` truncates a game after that
    many agent steps (the emulator's own limit is v5's 108,000 frames, 27,000 steps). ``make_kwargs``
    go to ``gymnasium.make``.
    """
    ale_py = import_extra("ale_py", "atari", what="Atari envs")
    gym.register_envs(ale_py)
    checker_off = bool(make_kwargs.pop("disable_env_checker", True))
    env: gym.Env[Frame, int] = gym.make(atari_env_id(game), max_episode_steps=None, disable_env_checker=checker_off,
                                        frameskip=1, repeat_action_probability=repeat_action_probability, **make_kwargs)
    env = ReseedWithoutReload(env)
    env = gym.wrappers.AtariPreprocessing(env, noop_max=noop_max, frame_skip=frame_skip, screen_size=screen_size,
                                          terminal_on_life_loss=False, grayscale_obs=True, scale_obs=False)
    if max_episode_steps is not None:  # agent steps of a whole game (below EpisodicLife)
        env = gym.wrappers.TimeLimit(env, max_episode_steps)
    if train:
        env = EpisodicLife(env)
    if needs_fire_reset(env):
        env = FireReset(env)
    env = gym.wrappers.FrameStackObservation(env, frame_stack)
    if clip_reward:
        env = ClipRewardKeepScore(env)
    return env


@dataclass(frozen=True)
class AtariConfig(GymnasiumConfig):
    """``env`` of an :class:`AtariEnv`: :class:`GymnasiumEnv`'s keys and the preset's."""

    #: (bool) a lost life ends the episode (training); the evaluator's envs set it False.
    train: bool = True
    #: (int) at most this many no-op actions after reset.
    noop_max: int = setting(30, "[0, inf)")
    #: (int) each action repeated this many frames, the last two max-pooled.
    frame_skip: int = setting(4, "[1, inf)")
    #: (int) frames stacked into one observation.
    frame_stack: int = setting(4, "[1, inf)")
    #: (bool) rewards clipped to their sign (the reported return stays the game score).
    clip_reward: bool = True
    #: (float) sticky actions: 0.25 is ALE v5's default (Machado et al. 2018); 0.0 the Nature DQN setting.
    repeat_action_probability: float = setting(0.25, "[0, 1]")


@ENV_REGISTRY.register("atari")
class AtariEnv(GymnasiumEnv[Frame, int]):
    """An Atari game with the preset of :func:`make_atari_env`, as a Stride env (type ``'atari'``).

    ``env_id`` is the game (``'ALE/Pong-v5'``); ``train`` turns on :class:`EpisodicLife`; the
    evaluator's envs get ``train=False`` (:meth:`evaluator_env_cfg`). ``eval_episode_return`` is
    the raw game score of the episode (of the life that ended, in training), never the clipped sum.
    """

    config_view = AtariConfig
    _typed: AtariConfig

    @classmethod
    def evaluator_env_cfg(cls, cfg: Mapping[str, object]) -> Dict[str, object]:
        """The evaluator's env config: whole games (``train=False``)."""
        return dict(cfg, train=False)

    def _preset(self) -> Tuple[str, Dict[str, Any]]:
        """The env id and the preset's keyword arguments from this env's config (for the Python
        preset and the native vector env alike)."""
        c = self._typed
        if self._env_id is None:
            raise ConfigError("AtariEnv needs env_id, e.g. 'ALE/Pong-v5'")
        steps = c.max_episode_steps
        return self._env_id, dict(
            train=bool(c.train), noop_max=int(c.noop_max), frame_skip=int(c.frame_skip),
            frame_stack=int(c.frame_stack), clip_reward=bool(c.clip_reward),
            repeat_action_probability=float(c.repeat_action_probability),
            max_episode_steps=steps if isinstance(steps, int) else None)

    def make_vector_env(self, num_envs: int, num_threads: int = 0) -> gym.vector.VectorEnv:
        """This config's preset as ale-py's C++ vector env (``stride.zoo.atari.vector_env``, whose
        docstring lists where it differs from :func:`make_atari_env`), for the ``'vector'`` manager."""
        env_id, preset = self._preset()
        if self._typed.make_kwargs:
            raise ConfigError(f"env manager 'vector' (ale-py's vector env) takes no make_kwargs, got {self._typed.make_kwargs!r}")
        return make_atari_vector_env(atari_env_id(env_id), num_envs, num_threads=num_threads, **preset)

    def _create(self) -> gym.Env[Frame, int]:
        env_id, preset = self._preset()
        make_kwargs: Dict[str, Any] = dict(self._typed.make_kwargs or {})
        if self._replay_path is not None:
            make_kwargs.setdefault("render_mode", "rgb_array")
        try:
            env = make_atari_env(env_id, **preset, **make_kwargs)
        except gym.error.Error as e:
            raise ConfigError(f"cannot make Atari env '{env_id}': {e}") from None
        self._enforce_order = False
        if self._replay_path is not None:
            # one rendered frame per agent step: the console's 60 frames a second over the frame skip
            # plays in real time (ale-py's metadata says 30 whatever the frame skip)
            fps = 60.0 / int(preset["frame_skip"])
            env = RecordEpisodes(env, self._replay_path, fps=fps)
        return env

    def _end_timestep(self, obs: Frame, reward: SupportsFloat, terminated: bool, truncated: bool,
                      info: Dict[str, Any]) -> BaseEnvTimestep[Frame]:
        timestep = super()._end_timestep(obs, reward, terminated, truncated, info)
        score = timestep.info.pop("episode_score", None)
        if isinstance(score, float):  # clip_reward: the raw score, not the clipped sum
            timestep.info["eval_episode_return"] = score
        return timestep

    def __repr__(self) -> str:
        return f"AtariEnv({self._env_id!r}, train={bool(self._typed.train)})"
