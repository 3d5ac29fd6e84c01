"""Episode videos: ``RecordEpisodes`` wraps a Gymnasium env that renders ``rgb_array`` frames and
writes one mp4 per finished episode (``episode0000.mp4``, ``episode0001.mp4``, ... in its folder).

Frames are kept in memory for the episode and encoded with ``imageio`` (the ``[video]`` extra) only
when the episode ends (terminated or truncated); the file is written atomically, so a crash or
kill never leaves a half-written video. An episode still open when the env is closed or reset is
dropped (an evaluator's manager resets envs after their last counted episode). Envs that do not
record never pass through this wrapper: recording costs nothing when it is off.
"""

from __future__ import annotations

import os
from typing import IO, Dict, List, Optional, SupportsFloat, Tuple

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ..utils.errors import ConfigError
from ..utils.extras import import_extra
from ..utils.files import atomic_write
from .base_env import ActT, ObsT

Frame = npt.NDArray[np.uint8]


def require_video() -> None:
    """A one-line :class:`~stride.utils.extras.MissingExtraError` unless imageio and its ffmpeg are installed."""
    import_extra("imageio", "video", what="recording videos")
    import_extra("imageio_ffmpeg", "video", what="recording videos")


def encode_mp4(frames: List[Frame], fps: float) -> bytes:
    """``frames`` (H x W x 3 uint8) as the bytes of an H.264 mp4."""
    iio = import_extra("imageio.v3", "video", what="recording videos")
    data: bytes = iio.imwrite("<bytes>", np.stack(frames), extension=".mp4", plugin="FFMPEG", fps=fps,
                              macro_block_size=1)
    return data


def write_mp4(path: str, frames: List[Frame], fps: float) -> None:
    """``path`` holds the video of ``frames``, whole, or is left as it was."""
    data = encode_mp4(frames, fps)

    def write(f: IO[bytes]) -> None:
        f.write(data)

    atomic_write(path, write, binary=True)


def headless_sdl() -> None:
    """Gymnasium's pygame renders (classic control, Box2D, toy text) call ``pygame.init()``, which
    starts every SDL subsystem although ``rgb_array`` frames are drawn on an off-screen surface: on a
    machine without a display SDL's video probe prints ``error: XDG_RUNTIME_DIR is invalid or not set
    in the environment.`` and its ALSA audio probe a dozen ``ALSA lib ...`` lines to stderr. Where there
    is no display (no ``DISPLAY`` / ``WAYLAND_DISPLAY``) SDL's ``dummy`` video and audio drivers are
    chosen unless the user chose drivers (``SDL_VIDEODRIVER`` / ``SDL_AUDIODRIVER``); the frames are
    the same. Set in the process that records, before its env's first render."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")


class RecordEpisodes(gym.Wrapper[ObsT, ActT, ObsT, ActT]):
    """Record the ``rgb_array`` render of every step; one mp4 per finished episode in ``folder``."""

    def __init__(self, env: gym.Env[ObsT, ActT], folder: str, fps: Optional[float] = None) -> None:
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ConfigError(f"recording videos needs an env made with render_mode='rgb_array', got "
                              f"render_mode={env.render_mode!r} ({env})")
        require_video()
        headless_sdl()
        self.folder = folder
        self.fps = float(fps if fps is not None else env.metadata.get("render_fps") or 30)
        self.episode_index = 0
        self._frames: List[Frame] = []

    def _capture(self) -> None:
        frame = self.env.render()
        if frame is not None:
            self._frames.append(np.asarray(frame, dtype=np.uint8))

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, object]] = None) -> Tuple[ObsT, Dict[str, object]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._frames = []  # an unfinished episode is dropped
        self._capture()
        return obs, info

    def step(self, action: ActT) -> Tuple[ObsT, SupportsFloat, bool, bool, Dict[str, object]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._capture()
        if terminated or truncated:
            self._flush()
        return obs, reward, terminated, truncated, info

    def _flush(self) -> None:
        frames, self._frames = self._frames, []
        if not frames:
            return
        os.makedirs(self.folder, exist_ok=True)
        write_mp4(os.path.join(self.folder, f"episode{self.episode_index:04d}.mp4"), frames, self.fps)
        self.episode_index += 1

    def close(self) -> None:
        self._frames = []
        super().close()
