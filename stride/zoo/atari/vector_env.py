"""The Atari preset as a native batched env: ale-py's C++ ``AtariVectorEnv`` (threads, no Python
per frame) under the rules of Stride's ``'vector'`` env manager.

:func:`make_atari_vector_env` configures ale-py's vector env as close to :func:`make_atari_env` as
it allows, and :class:`AtariVectorPreset` adds in Python, on whole arrays, what ale-py does not do
the preset's way: episodic life with the game going on (ale-py's ``episodic_life`` restarts the
game at a life loss), and rewards clipped for learning with the raw game score kept (ale-py's
``reward_clipping`` drops it). Peers: EnvPool and ale-py give the batched env; SB3, Tianshou and
DI-engine would run it as one opaque env. Here it is a Stride env manager with per-env timesteps.

Where the native preprocessing differs from the Python preset (measured or read in ale-py 0.12's
``preprocessed_env.cpp``):

- reset: ale-py presses FIRE first, then 0..noop_max-2 no-ops (the preset: 1..noop_max no-ops, then
  FIRE and action 2); its resize is OpenCV ``INTER_AREA`` from the max-pooled grayscale frame, as
  Gymnasium's ``AtariPreprocessing`` does;
- life loss (training): the episode ends and the next one starts from the same frame, with no
  no-op and no FIRE (the preset's :class:`EpisodicLife` + :class:`FireReset` take a no-op, FIRE and
  action 2 there): in Breakout the agent must serve the ball itself after a lost life;
- seeds: a seeded reset reloads the ROM (~0.19 s here), so envs are seeded at ``launch`` and at a
  manager ``reset`` only; later episodes follow from the env's own RNG (a run stays a function of
  its seed);
- the frame stack after a reset: ale-py pads it with zero frames (``[0, 0, 0, first]``), the
  preset with copies of the first frame (Gymnasium's ``FrameStackObservation``).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple, Union

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ...utils.extras import import_extra

#: a batch of stacked frames ``(num_envs, stack, 84, 84)`` uint8
Frames = npt.NDArray[np.uint8]
_VecStep = Tuple[Frames, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], Dict[str, object]]


def ale_game(env_id: str) -> str:
    """``'ALE/Breakout-v5'`` -> ale-py's ROM name ``'breakout'`` (``'ALE/MsPacman-v5'`` -> ``'ms_pacman'``)."""
    name = env_id.split("/")[-1].split("-")[0]
    return "".join(f"_{c.lower()}" if c.isupper() and k else c.lower() for k, c in enumerate(name))


class AtariVectorPreset(gym.vector.VectorWrapper):
    """Episodic life (training) and clipped rewards with the score kept, on a batch.

    Wraps an ale-py ``AtariVectorEnv`` made with ``autoreset_mode=SAME_STEP``, no native episodic
    life and no native reward clipping. Each step returns the clipped rewards (float32) and, in
    ``info``: ``final_obs`` (the true final observation of every env whose episode ended at this
    step, the next episode's first one in ``obs``), ``episode_score`` (the raw score of each
    episode that ended, since its start) and ``game_over`` (False where only a life was lost).
    """

    def __init__(self, env: gym.vector.VectorEnv, train: bool, clip_reward: bool) -> None:
        super().__init__(env)
        self._train = train
        self._clip = clip_reward
        self._score = np.zeros(env.num_envs, dtype=np.float64)
        self._lives = np.zeros(env.num_envs, dtype=np.int64)

    def reset(self, *, seed: Optional[Union[int, npt.NDArray[np.int64]]] = None, options: Optional[Dict[str, object]] = None
              ) -> Tuple[Frames, Dict[str, object]]:
        # one seed per env, as an array (what the 'vector' manager gives ale-py); Gymnasium's stub says int only
        obs, info = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]
        mask = (options or {}).get("reset_mask")
        reset = np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        self._score[reset] = 0.0
        self._lives[reset] = np.asarray(info["lives"])[reset]
        return obs, info

    def step(self, actions: npt.NDArray[np.int64]) -> _VecStep:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        raw = np.asarray(reward, dtype=np.float64)
        score = self._score
        score += raw
        lives = np.asarray(info["lives"], dtype=np.int64)
        game_end = terminated | truncated  # ale-py reset these envs (same-step autoreset)
        ended = game_end
        if self._train:  # a lost life ends the episode; the game goes on (lives then still > 0)
            life_lost = ~game_end & (lives < self._lives) & (lives > 0)
            terminated = terminated | life_lost
            ended = game_end | life_lost
        self._lives = lives
        if ended.any():
            final = np.array(obs)  # a life loss: the final obs is the current one (no reset)
            if game_end.any():
                final[game_end] = info["final_obs"][game_end]
            info = dict(info, final_obs=final, episode_score=score.copy(), game_over=game_end)
            score[ended] = 0.0
        learn = np.sign(raw).astype(np.float32) if self._clip else raw.astype(np.float32)
        return obs, learn, terminated, truncated, info


def make_atari_vector_env(env_id: str, num_envs: int, train: bool, *, num_threads: int = 0, noop_max: int = 30,
                          frame_skip: int = 4, screen_size: int = 84, frame_stack: int = 4, clip_reward: bool = True,
                          repeat_action_probability: float = 0.25,
                          max_episode_steps: Optional[int] = None) -> AtariVectorPreset:
    """``num_envs`` games of the preset in ale-py's C++ vector env, on ``num_threads`` threads
    (0: one per core, at most ``num_envs``). ``env_id``: a Gymnasium id (``'ALE/Breakout-v5'``);
    the other arguments as :func:`make_atari_env`'s; the module docstring lists where the native
    preprocessing differs."""
    import_extra("ale_py", "atari", what="Atari envs")
    from ale_py.vector_env import AtariVectorEnv

    frames = 108_000 if max_episode_steps is None else max_episode_steps * frame_skip
    env = AtariVectorEnv(ale_game(env_id), num_envs, num_threads=num_threads,
                         max_num_frames_per_episode=frames, repeat_action_probability=repeat_action_probability,
                         autoreset_mode=gym.vector.AutoresetMode.SAME_STEP, img_height=screen_size,
                         img_width=screen_size, grayscale=True, stack_num=frame_stack, frameskip=frame_skip,
                         maxpool=True, noop_max=noop_max, episodic_life=False, life_loss_info=False,
                         reward_clipping=False, use_fire_reset=True)
    return AtariVectorPreset(env, train, clip_reward)
