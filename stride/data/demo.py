"""Demonstration datasets in Minari's format (Farama's standard for offline RL): one writer, one reader.

:func:`write_demo_dataset` stores whole episodes (obs, action, reward, terminated, truncated; no
infos) through Minari's public ``create_dataset_from_buffers``, each episode with its reset seed in
Minari's episode metadata (as Minari's ``DataCollector`` records it: the episode replays), and the
env spec (Gymnasium id and its kwargs, where the env is a registered Gymnasium one), the collection
seed and every episode's return in the dataset's metadata (a ``stride`` entry beside Minari's own
keys, which other tools ignore). The write is atomic: the dataset is built in a hidden temporary
folder beside the target and renamed into place, so a crash leaves no half dataset under the
target's name (and the temporary is removed when the write fails).

:func:`load_demo_dataset` reads a dataset -- Stride's or any Minari dataset, by folder or by a
local Minari id -- into the columns Stride's learners take (``obs``, ``action``, ``reward``,
``next_obs``, ``terminated``, ``truncated``; dict observations as dicts of columns). It is the one
reader every consumer uses: GAIL's ``reward_model.data_path`` now, ``policy.collect.data_path``
(BC, SQIL, R2D3, the offline entry) later.

Better than the peers on purpose: DI-engine pickles a list of transition dicts
(``expert_data.pkl``, loadable only by DI-engine and only with pickle's trust), SB3/``imitation``
keep their own trajectory formats; here the data is a standard, versioned, pickle-free Minari
dataset that Minari, TorchRL, d3rlpy or AgileRL load as is, and that records where it came from.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import re
import shutil
import tempfile
import warnings
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

import gymnasium as gym
import numpy as np

from ..utils.errors import ConfigError, StrideError, resource_error
from ..utils.extras import import_extra
from ..utils.gym_ids import env_spec
from ..utils.narrow import as_mapping

#: the columns of one transition, as the reader returns them and the writer takes them per episode
DEMO_COLUMNS = ("obs", "action", "reward", "next_obs", "terminated", "truncated")
#: the key of Stride's entry in a Minari dataset's metadata
META_KEY = "stride"
#: the version of that entry's layout
META_VERSION = 1


def _minari() -> Any:
    return import_extra("minari", "minari", "demonstration datasets")


@dataclasses.dataclass(frozen=True)
class DemoDataset:
    """A dataset's transitions as columns, episodes end to end (episode ``k`` is the rows
    ``starts[k] : starts[k] + lengths[k]``).

    Attributes:
        columns: ``obs``, ``action``, ``reward`` (float32), ``next_obs``, ``terminated``, ``truncated``
            (bool), one row per transition; a dict observation is a dict of such arrays.
        lengths / returns: per episode, its number of steps and its undiscounted return.
        observation_space / action_space: the spaces the dataset declares.
        env_id / env_kwargs: the Gymnasium env spec it was recorded on (None / {} where unknown).
        seed: the collection seed Stride recorded (None for datasets made elsewhere).
        path: the dataset's folder (the one holding ``data/``).
        meta: Stride's metadata entry (empty for datasets made elsewhere).
    """

    columns: Dict[str, Any]
    lengths: np.ndarray
    returns: np.ndarray
    observation_space: gym.spaces.Space[object]
    action_space: gym.spaces.Space[object]
    env_id: Optional[str]
    env_kwargs: Dict[str, Any]
    seed: Optional[int]
    path: str
    meta: Dict[str, Any]

    def __len__(self) -> int:
        """The number of transitions."""
        return int(self.lengths.sum())

    @property
    def starts(self) -> np.ndarray:
        """The first row of each episode."""
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    def transitions(self) -> List[Dict[str, object]]:
        """One dict per transition in the form the policies' ``process_transition`` makes them
        (``done`` = terminated: a truncated episode still bootstraps), for replay buffers."""
        cols = self.columns
        out: List[Dict[str, Any]] = []
        for i in range(len(self)):
            out.append({"obs": _row(cols["obs"], i), "action": cols["action"][i], "reward": float(cols["reward"][i]),
                        "next_obs": _row(cols["next_obs"], i), "done": bool(cols["terminated"][i])})
        return out

    def check_env(self, observation_space: gym.spaces.Space[object], action_space: gym.spaces.Space[object],
                  env_id: Optional[str] = None) -> None:
        """Refuse (one line) a dataset recorded on another env than the run's: another Gymnasium id
        (where both are known) or other observation / action spaces."""
        where = f"demonstration dataset '{self.path}'"
        if env_id is not None and self.env_id is not None and env_id != self.env_id:
            raise ConfigError(f"{where} was recorded on env '{self.env_id}', this run's env is '{env_id}': "
                              f"give a dataset of '{env_id}' (stride -m collect_demo)")
        for name, mine, theirs in (("observation", self.observation_space, observation_space),
                                   ("action", self.action_space, action_space)):
            if not _same_space(mine, theirs):
                raise ConfigError(f"{where} has the {name} space {mine}, this run's env has {theirs}: "
                                  f"give a dataset recorded on this env")


def _row(col: Any, i: int) -> Any:
    return {k: v[i] for k, v in col.items()} if isinstance(col, Mapping) else col[i]


def _same_space(a: gym.spaces.Space[object], b: gym.spaces.Space[object]) -> bool:
    """Same kind and shape (bounds may differ in dtype, e.g. float32 bounds stored as float64)."""
    if isinstance(a, gym.spaces.Discrete) and isinstance(b, gym.spaces.Discrete):
        return int(a.n) == int(b.n) and int(a.start) == int(b.start)
    if isinstance(a, gym.spaces.Box) and isinstance(b, gym.spaces.Box):
        return a.shape == b.shape and np.allclose(a.low, b.low) and np.allclose(a.high, b.high)
    if isinstance(a, gym.spaces.Dict) and isinstance(b, gym.spaces.Dict):
        return a.keys() == b.keys() and all(_same_space(a[k], b[k]) for k in a.keys())
    return a == b


# ---- writing ----------------------------------------------------------------------------------
def stack_episode(transitions: Sequence[Mapping[str, object]]) -> Dict[str, object]:
    """One episode's transition dicts (each with :data:`DEMO_COLUMNS`) -> its columns."""
    if not transitions:
        raise ValueError("an episode needs at least one transition")
    missing = [k for k in DEMO_COLUMNS if k not in transitions[0]]
    if missing:
        raise ValueError(f"a demonstration transition needs the keys {list(DEMO_COLUMNS)}; missing {missing}")
    out: Dict[str, Any] = {}
    for key in DEMO_COLUMNS:
        values = [t[key] for t in transitions]
        first = values[0]
        out[key] = {k: np.stack([np.asarray(as_mapping(v, key)[k]) for v in values]) for k in first} if isinstance(first, Mapping) \
            else np.stack([np.asarray(v) for v in values])
    return out


def _minari_episode(index: int, episode: Mapping[str, Any], seed: Optional[int]) -> Any:
    """Stride's episode columns -> a Minari ``EpisodeBuffer`` (observations: T+1 rows, the last
    one the true final observation; ``seed``: its reset seed, Minari's episode metadata)."""
    from minari.data_collector import EpisodeBuffer

    n = len(np.asarray(episode["reward"]))
    terminated = np.asarray(episode["terminated"], dtype=bool).reshape(n)
    truncated = np.asarray(episode["truncated"], dtype=bool).reshape(n)
    if n == 0 or not (terminated[-1] or truncated[-1]) or (terminated[:-1] | truncated[:-1]).any():
        raise ValueError(f"episode {index} is not one whole episode (it must end, terminated or truncated, "
                         "at its last step and only there)")

    def observations(obs: Any, next_obs: Any) -> Any:
        if isinstance(obs, Mapping):
            return {k: observations(obs[k], next_obs[k]) for k in obs}
        return np.concatenate([np.asarray(obs), np.asarray(next_obs)[-1:]])

    return EpisodeBuffer(id=index, seed=seed, observations=observations(episode["obs"], episode["next_obs"]),
                         actions=np.asarray(episode["action"]), rewards=np.asarray(episode["reward"], dtype=np.float64),
                         terminations=terminated, truncations=truncated)


@contextlib.contextmanager
def _datasets_root(root: str) -> Iterator[None]:
    """Minari's dataset root (its documented ``MINARI_DATASETS_PATH``) set to ``root`` for the block."""
    before = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = root
    try:
        yield
    finally:
        if before is None:
            del os.environ["MINARI_DATASETS_PATH"]
        else:
            os.environ["MINARI_DATASETS_PATH"] = before


def _env_spec(env_id: Optional[str], env_kwargs: Mapping[str, Any]) -> Optional[gym.envs.registration.EnvSpec]:
    """The Gymnasium spec of ``env_id`` with ``env_kwargs`` (None for an env Gymnasium does not know)."""
    if env_id is None:
        return None
    try:
        spec = env_spec(env_id)
    except gym.error.Error:
        return None
    kwargs = dict(env_kwargs)
    max_steps = kwargs.pop("max_episode_steps", None)
    spec = dataclasses.replace(spec, kwargs={**spec.kwargs, **kwargs})
    return spec if max_steps is None else dataclasses.replace(spec, max_episode_steps=int(max_steps))


def write_demo_dataset(path: str, episodes: Sequence[Mapping[str, object]], observation_space: gym.spaces.Space[object],
                       action_space: gym.spaces.Space[object], *, env_id: Optional[str] = None,
                       env_kwargs: Optional[Mapping[str, object]] = None, seed: Optional[int] = None,
                       algorithm_name: str = "stride", description: Optional[str] = None,
                       extra: Optional[Mapping[str, Any]] = None,
                       episode_seeds: Optional[Sequence[Optional[int]]] = None) -> str:
    """Write whole ``episodes`` (each a mapping of :data:`DEMO_COLUMNS` columns, see
    :func:`stack_episode`) as a Minari dataset in the folder ``path`` (which must not exist yet);
    returns its absolute path. ``env_id`` / ``env_kwargs`` (Gymnasium's), ``seed`` and ``extra``
    (JSON values, e.g. the env config) are recorded with the episode returns; ``episode_seeds``
    (one per episode: its reset seed, None where unknown) go into Minari's episode metadata, where
    Minari's own ``DataCollector`` puts them (``dataset.storage.get_episode_metadata([k])['seed']``),
    so an episode replays: the env reset with its seed, its actions stepped."""
    minari = _minari()
    out = os.path.abspath(path)
    if os.path.exists(out):
        raise ConfigError(f"'{path}' already exists (a dataset is never overwritten): give a new folder")
    if not episodes:
        raise ValueError("a demonstration dataset needs at least one episode")
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    seeds = list(episode_seeds) if episode_seeds is not None else [None] * len(episodes)
    if len(seeds) != len(episodes):
        raise ValueError(f"episode_seeds: one per episode, got {len(seeds)} for {len(episodes)} episodes")
    buffers = [_minari_episode(i, ep, None if sd is None else int(sd))
               for i, (ep, sd) in enumerate(zip(episodes, seeds))]
    returns = [float(np.sum(np.asarray(ep["reward"], dtype=np.float64))) for ep in episodes]
    kwargs = dict(env_kwargs or {})
    meta = {"version": META_VERSION, "env_id": env_id, "env_kwargs": kwargs, "seed": seed, "returns": returns,
            "lengths": [len(b.rewards) for b in buffers], **dict(extra or {})}
    meta = json.loads(json.dumps(meta))  # plain JSON values or a TypeError now, before anything is written
    dataset_id = re.sub(r"[^A-Za-z0-9_]+", "_", os.path.basename(out)).strip("_") + "-v0"
    spec = _env_spec(env_id, kwargs)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.tmp", dir=parent)
    try:
        with _datasets_root(tmp), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # Minari's advice on optional metadata
            dataset = minari.create_dataset_from_buffers(
                dataset_id, buffers, env=spec, eval_env=spec, algorithm_name=algorithm_name,
                observation_space=observation_space, action_space=action_space, jpeg_encoding=False,
                description=description or f"{len(buffers)} episodes recorded by Stride"
                                           + (f" on {env_id}" if env_id else ""))
            dataset.storage.update_metadata({META_KEY: meta})
        os.rename(os.path.join(tmp, dataset_id), out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# ---- reading ----------------------------------------------------------------------------------
def _data_path(path_or_id: str) -> str:
    """A dataset folder (holding ``data/metadata.json``), its ``data`` folder, or a local Minari id
    -> the ``data`` folder; a one-line error naming what was given otherwise."""
    for candidate in (os.path.join(path_or_id, "data"), path_or_id):
        if os.path.isfile(os.path.join(candidate, "metadata.json")):
            return candidate
    if os.path.exists(path_or_id):
        raise ConfigError(f"'{path_or_id}' is not a Minari dataset (no data/metadata.json in it): give the folder "
                          "that stride -m collect_demo wrote, or a local Minari dataset id")
    minari = _minari()
    local = sorted(minari.list_local_datasets())
    if path_or_id in local:
        return str(minari.load_dataset(path_or_id).storage.data_path)
    raise ConfigError(f"demonstration dataset '{path_or_id}' not found: no such folder, and no local Minari dataset "
                      f"of that id; local ids: {', '.join(local) if local else 'none'}")


#: errno values of an ``OSError`` that mean the machine refused a read (not a bad file)
_REFUSALS = (errno.EACCES, errno.EPERM, errno.EIO, errno.EMFILE, errno.ENFILE, errno.ENOMEM)


def unreadable_dataset(path_or_id: str, files: Sequence[str], error: Exception) -> StrideError:
    """One line for a dataset whose files cannot be read: the files and the cause; a corrupt or
    truncated file (garbage HDF5, broken metadata JSON) is bad input (a ``ConfigError``, exit 2),
    a refusal of the machine (permissions, I/O error) a ``ResourceError`` (exit 1)."""
    where = ", ".join(f"'{f}'" for f in files) or f"'{path_or_id}'"
    if isinstance(error, OSError) and error.errno in _REFUSALS:
        return resource_error("read", where.strip("'"), error)
    cause = " ".join(str(error).split())[:300]
    return ConfigError(f"demonstration dataset '{path_or_id}': cannot read {where}: {type(error).__name__}"
                       f"{': ' + cause if cause else ''} (a corrupt or truncated file, or one this Minari does not "
                       "read); give a whole Minari dataset (write it again with stride -m collect_demo)")


def load_demo_dataset(path_or_id: str) -> DemoDataset:
    """Read a Minari dataset (Stride's or another's; a folder or a local Minari id) into columns."""
    minari = _minari()
    data_path = _data_path(str(path_or_id))
    reading = [os.path.join(data_path, "metadata.json")]  # the file(s) being read, for the error
    try:
        dataset = minari.MinariDataset(data_path)
        reading = sorted(os.path.join(data_path, f) for f in os.listdir(data_path) if f != "metadata.json")
        episodes = list(dataset.iterate_episodes())
    except Exception as e:  # Minari's own refusal (unsupported version), a corrupt or truncated file: one line
        raise unreadable_dataset(str(path_or_id), reading, e) from None
    if not episodes:
        raise ConfigError(f"Minari dataset '{path_or_id}' holds no episode")

    def split(obs: Any) -> Any:  # T+1 observations -> (obs, next_obs) of T transitions
        if isinstance(obs, Mapping):
            parts = {k: split(v) for k, v in obs.items()}
            return {k: p[0] for k, p in parts.items()}, {k: p[1] for k, p in parts.items()}
        return np.asarray(obs)[:-1], np.asarray(obs)[1:]

    def cat(values: List[Any]) -> Any:
        if isinstance(values[0], Mapping):
            return {k: cat([v[k] for v in values]) for k in values[0]}
        return np.concatenate(values)

    obs, next_obs = zip(*(split(ep.observations) for ep in episodes))
    columns: Dict[str, Any] = {
        "obs": cat(list(obs)), "action": cat([np.asarray(ep.actions) for ep in episodes]),
        "reward": cat([np.asarray(ep.rewards, dtype=np.float32).reshape(-1) for ep in episodes]),
        "next_obs": cat(list(next_obs)),
        "terminated": cat([np.asarray(ep.terminations, dtype=bool).reshape(-1) for ep in episodes]),
        "truncated": cat([np.asarray(ep.truncations, dtype=bool).reshape(-1) for ep in episodes]),
    }
    lengths = np.array([len(np.asarray(ep.rewards).reshape(-1)) for ep in episodes], dtype=np.int64)
    returns = np.array([float(np.sum(np.asarray(ep.rewards, dtype=np.float64))) for ep in episodes])
    meta = dict(dataset.storage.metadata.get(META_KEY) or {})
    spec = dataset.env_spec
    env_id = meta.get("env_id") or (spec.id if spec is not None else None)
    env_kwargs = dict(meta.get("env_kwargs") or (spec.kwargs if spec is not None else {}))
    seed = meta.get("seed")
    folder = os.path.dirname(os.path.abspath(data_path))
    return DemoDataset(columns, lengths, returns, dataset.observation_space, dataset.action_space, env_id,
                       env_kwargs, None if seed is None else int(seed), folder, meta)
