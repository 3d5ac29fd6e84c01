"""Adders: turn the stream an environment produces into the items replay stores.

The interface is RL-Flow's README form, extended with the action::

    adder = SequenceAdder(items.append, sequence_length=80, period=40)
    obs = env.reset()
    adder.add(obs)                                   # first call of an episode: just the observation
    while True:
        action = policy(obs)
        obs, reward, done, info = env.step(action)   # a BaseEnvTimestep
        adder.add(obs, reward, done, info, action=action)
        if done:
            break                                    # the next add() starts a new episode

The adder a policy uses is :class:`SequenceAdder`: R2D2 / R2D3 cut each collected episode segment
into sequences with it. Transitions and their n-step returns are made by one pure function,
:func:`stride.rl_utils.get_nstep_return_data`, which ``Policy.get_train_sample`` calls.
RL-Flow's :class:`TransitionAdder`, :class:`NStepTransitionAdder` and :class:`EpisodeAdder` stay
one release as deprecated aliases (a ``DeprecationWarning`` on construction): the n-step one calls
that same function, so Stride has one n-step implementation.

``add(obs, rew, done, info, action)`` reports what ``env.step(action)`` returned; the first call
after construction, after an episode end or after :meth:`reset` starts an episode and only stores
``obs`` (its other arguments are ignored). :meth:`add_first` says the same explicitly.

How an episode ended comes from ``info`` (see ``stride.envs.base_env``): ``info['terminated']``
(the MDP ended: no bootstrap), ``info['truncated']`` (time limit: ``obs`` is the true final
observation and TD targets bootstrap from it), ``info['abnormal']`` (the env crashed: the step
carries no valid data; the episode is closed at the last good observation as if truncated there,
and nothing is bootstrapped across the crash). ``done`` without either key counts as termination
(DI-engine's legacy envs); gymnasium's ``TimeLimit.truncated`` is understood too.

Items are plain dicts of arrays, ready for a column buffer: the sequence and episode adders emit
stacked rows ``{obs, action, reward, done, start, last, mask}`` (row ``t`` holds ``s_t``, ``a_t``,
``r_t`` and whether ``a_t`` terminated the episode; the final observation gets its own row with
``last=True`` and zero action/reward, as in ACME; padding rows have ``mask=False``). The transition
adders emit ``{obs, action, reward, next_obs, done, truncated}`` (+ ``discount`` = ``gamma ** k``
for n-step, ``k`` the real steps summed), where ``done`` means *terminated* and ``truncated`` marks a
transition whose ``next_obs`` is the last observation of an episode cut short.

``add(..., extras={...})`` stores what the agent knew when it acted (ACME's extras: e.g. the recurrent
state it started from) under their own keys, in the step's row (the final observation and padding
rows get zeros).

How this differs from the peers, on purpose:

* Truncation is not termination: an episode cut short keeps its true final observation (its
  ``last`` row) and ``done=False`` (RL-Flow's ``TransitionAdder`` zeroes ``next_obs`` at every
  ``done``; DI-engine loses gymnasium's truncation flag).
* Two episodes are never chained: every window stops at the episode end (ACME's
  ``EndBehavior.CONTINUE`` is refused), and a crashed env's step is dropped instead of being
  stitched to the next episode.
* No Reverb client: ``on_generate`` is any callable (a buffer's ``append``, a list, a queue).
"""

from __future__ import annotations

import warnings
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional

import numpy as np

from ..rl_utils.nstep import get_nstep_return_data

__all__ = [
    "Adder",
    "SequenceAdder",
    "TransitionAdder",
    "NStepTransitionAdder",
    "EpisodeAdder",
    "END_OF_EPISODE_BEHAVIORS",
    "episode_end",
]

# How a step ended its episode.
_RUNNING, _TERMINATED, _TRUNCATED, _ABNORMAL = "running", "terminated", "truncated", "abnormal"


def episode_end(done: bool, info: Optional[Mapping[str, object]]) -> str:
    """``'running'``, ``'terminated'``, ``'truncated'`` or ``'abnormal'`` for one step's ``(done, info)``.

    Termination wins when an env reports both (gymnasium allows it): there is nothing to bootstrap.
    """
    info = info or {}
    if not done:
        return _RUNNING
    if info.get("abnormal", False):
        return _ABNORMAL
    if info.get("terminated", False):
        return _TERMINATED
    if info.get("truncated", False) or info.get("TimeLimit.truncated", False):
        return _TRUNCATED
    return _TERMINATED


class Adder:
    """Episode bookkeeping shared by all adders; subclasses get :meth:`_step` and :meth:`_end` calls."""

    def __init__(self, on_generate: Callable[[Dict[str, object]], object]) -> None:
        if not callable(on_generate):
            raise TypeError(f"on_generate must be callable, got {on_generate!r}")
        self.on_generate = on_generate
        self._last_obs: Any = None
        self._in_episode = False
        self._episode_start = True

    def add_first(self, obs: object, episode_start: bool = True) -> None:
        """Start an episode at ``obs``; an episode still open must be ended or :meth:`reset` first.
        ``episode_start=False`` resumes an episode mid-way (a collector's later segment of it): the
        row adders then mark no row as its ``start``."""
        if self._in_episode:
            raise ValueError(
                f"{type(self).__name__}.add_first while an episode is open: end it with done=True or call reset()"
            )
        self._last_obs = obs
        self._in_episode = True
        self._episode_start = bool(episode_start)

    def add(
        self,
        obs: object,
        rew: object = 0.0,
        done: bool = False,
        info: Optional[Mapping[str, object]] = None,
        action: object = None,
        extras: Optional[Mapping[str, object]] = None,
    ) -> None:
        """Report one ``env.step(action)`` result, or start an episode (see the module docstring).
        ``extras``: what the agent knew when it chose ``action`` (ACME's extras, e.g. the recurrent
        state it started from), stored with that step under their own keys."""
        if not self._in_episode:
            if done:
                raise ValueError(
                    f"{type(self).__name__}.add: the first call of an episode must carry the reset observation, "
                    "not a final step (done=True)"
                )
            self.add_first(obs)
            return
        end = episode_end(done, info)
        if end == _ABNORMAL:
            # The crashed step's obs/reward are not data: close the episode at the last good obs.
            self._end(_ABNORMAL, self._last_obs)
        else:
            self._step(self._last_obs, action, rew, obs, end, dict(extras or {}))
            if end != _RUNNING:
                self._end(end, obs)
        if end == _RUNNING:
            self._last_obs = obs
        else:
            self._last_obs = None
            self._in_episode = False

    def reset(self) -> None:
        """Drop the open episode without emitting anything more (e.g. the env was reset by hand)."""
        self._last_obs = None
        self._in_episode = False
        self._clear()

    # ---- for subclasses -------------------------------------------------------------------------
    def _step(self, obs: Any, action: Any, reward: Any, next_obs: Any, end: str, extras: Dict[str, Any]) -> None:
        """One real step ``obs --action--> next_obs`` with its reward and extras; ``end`` says if it was the last."""
        raise NotImplementedError

    def _end(self, end: str, final_obs: Any) -> None:
        """The episode ended (after the last :meth:`_step`, or at a crash with no step)."""

    def _clear(self) -> None:
        """Forget partial data."""


def _with_extras(item: Dict[str, Any], extras: Mapping[str, Any]) -> Dict[str, Any]:
    """``item`` with ``extras`` added under their own keys (a key the item already has is refused)."""
    clash = sorted(set(extras) & set(item))
    if clash:
        raise ValueError(f"extras key(s) {clash} clash with the adder's own fields {sorted(item)}")
    item.update(extras)
    return item


def _as_reward(reward: Any) -> Any:
    r = np.asarray(reward, dtype=np.float64)
    return float(r) if r.ndim == 0 else r


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(f"{name} is deprecated and goes next release; {instead}", DeprecationWarning, stacklevel=3)


def _transition(obs: Any, action: Any, reward: Any, next_obs: Any, end: str, extras: Mapping[str, Any]) -> Dict[str, Any]:
    """One step as ``{obs, action, reward, next_obs, done, truncated}`` plus its extras."""
    item = {
        "obs": obs,
        "action": action,
        "reward": reward,
        "next_obs": next_obs,
        "done": end == _TERMINATED,
        "truncated": end == _TRUNCATED,
    }
    return _with_extras(item, extras)


class TransitionAdder(Adder):
    """Deprecated: one-step transitions ``{obs, action, reward, next_obs, done, truncated}``.

    RL-Flow's adder with truncation kept apart from termination (``next_obs`` is always the real
    next observation; ``done`` is True only for termination). Collectors already hand out these
    transitions (``SampleCollector``), so this alias goes next release.
    """

    def __init__(self, on_generate: Callable[[Dict[str, object]], object]) -> None:
        _deprecated("TransitionAdder", "collect transitions with stride.worker.SampleCollector")
        super().__init__(on_generate)

    def _step(self, obs: Any, action: Any, reward: Any, next_obs: Any, end: str, extras: Dict[str, Any]) -> None:
        self.on_generate(_transition(obs, action, reward, next_obs, end, extras))


class NStepTransitionAdder(Adder):
    """Deprecated: n-step transitions from :func:`stride.rl_utils.get_nstep_return_data`.

    Each step ``t`` is emitted once, as soon as its window is known: ``{obs: s_t, action: a_t,
    reward: sum_{i<k} gamma^i r_{t+i}, next_obs: s_{t+k}, done, truncated, discount: gamma^k}`` with
    ``k = n_step``, or fewer steps when the episode ends inside the window (then ``next_obs`` is the
    final observation and ``done`` says whether the episode terminated there). The sums are the
    policies' own n-step function's, so the adder and ``Policy.get_train_sample`` cannot disagree.
    Rewards are scalars (that function's contract).
    """

    def __init__(self, on_generate: Callable[[Dict[str, object]], object], n_step: int, discount: float) -> None:
        _deprecated("NStepTransitionAdder", "policies make n-step transitions with "
                    "stride.rl_utils.get_nstep_return_data (Policy.get_train_sample)")
        super().__init__(on_generate)
        if isinstance(n_step, bool) or int(n_step) != n_step or n_step < 1:
            raise ValueError(f"n_step must be a positive integer, got {n_step!r}")
        discount = float(discount)
        if not 0.0 <= discount <= 1.0:
            raise ValueError(f"discount must be in [0, 1], got {discount}")
        self.n_step = int(n_step)
        self.discount = discount
        self._window: Deque[Dict[str, Any]] = deque()  # one-step transitions not yet emitted

    def _emit(self, count: int, truncated: bool) -> None:
        """Emit the oldest ``count`` transitions of the window, n-step summed."""
        for item in get_nstep_return_data(list(self._window), self.n_step, self.discount)[:count]:
            item["discount"] = item.pop("value_gamma")
            item["truncated"] = truncated and not item["done"]
            self.on_generate(item)
            self._window.popleft()

    def _step(self, obs: Any, action: Any, reward: Any, next_obs: Any, end: str, extras: Dict[str, Any]) -> None:
        reward = _as_reward(reward)
        if not isinstance(reward, float):
            raise ValueError(f"NStepTransitionAdder sums scalar rewards, got shape {np.shape(reward)}")
        self._window.append(_transition(obs, action, reward, next_obs, end, extras))
        if end == _RUNNING and len(self._window) == self.n_step:
            self._emit(1, truncated=False)

    def _end(self, end: str, final_obs: Any) -> None:
        # The steps whose window the episode end cut: shorter sums ending at the final observation.
        self._emit(len(self._window), truncated=end != _TERMINATED)

    def _clear(self) -> None:
        self._window.clear()


END_OF_EPISODE_BEHAVIORS = ("zero_pad", "truncate", "write")


class _RowAdder(Adder):
    """Keeps the rows of the current episode: ``{obs, action, reward, done, start, last, mask}``."""

    def __init__(self, on_generate: Callable[[Dict[str, object]], object]) -> None:
        super().__init__(on_generate)
        self._rows: List[Dict[str, Any]] = []
        self._episode_rows = 0  # rows appended in this episode (padding excluded)
        self._action_template: Any = None
        self._extras_template: Dict[str, Any] = {}  # zeros shaped like the extras, for rows without any

    def _row(self, obs: Any, action: Any, reward: Any, done: bool, last: bool, extras: Dict[str, Any]) -> Dict[str, Any]:
        row = {
            "obs": obs,
            "action": action,
            "reward": reward,
            "done": done,
            "start": self._episode_rows == 0 and self._episode_start,
            "last": last,
            "mask": True,
        }
        self._episode_rows += 1
        return _with_extras(row, extras)

    def _step(self, obs: Any, action: Any, reward: Any, next_obs: Any, end: str, extras: Dict[str, Any]) -> None:
        if action is None:
            raise ValueError(f"{type(self).__name__} needs the action: add(obs, rew, done, info, action=a)")
        if self._action_template is None:
            self._action_template = np.zeros_like(np.asarray(action))
            self._extras_template = {k: np.zeros_like(np.asarray(v)) for k, v in extras.items()}
        if extras.keys() != self._extras_template.keys():
            raise ValueError(f"extras keys changed within an episode: {sorted(extras)} after {sorted(self._extras_template)}")
        self._append(self._row(obs, action, _as_reward(reward), end == _TERMINATED, last=False, extras=extras))

    def _end(self, end: str, final_obs: Any) -> None:
        if self._action_template is None:  # a crash before the first action: nothing to store
            self._clear()
            return
        zero_reward = np.zeros_like(np.asarray(self._rows[-1]["reward"])) if self._rows else 0.0
        self._append(self._row(final_obs, self._action_template, _as_reward(zero_reward), False, last=True,
                               extras=self._extras_template))
        self._finish(end)
        self._clear()

    def _padding_row(self) -> Dict[str, Any]:
        ref = self._rows[-1]
        return {
            "obs": np.zeros_like(np.asarray(ref["obs"])),
            "action": self._action_template,
            "reward": _as_reward(np.zeros_like(np.asarray(ref["reward"]))),
            "done": False,
            "start": False,
            "last": False,
            "mask": False,
            **self._extras_template,
        }

    def _emit(self, rows: List[Dict[str, Any]]) -> None:
        self.on_generate({key: np.stack([np.asarray(r[key]) for r in rows]) for key in rows[0]})

    def _clear(self) -> None:
        self._rows = []
        self._episode_rows = 0
        self._action_template = None
        self._extras_template = {}

    def _append(self, row: Dict[str, Any]) -> None:
        raise NotImplementedError

    def _finish(self, end: str) -> None:
        raise NotImplementedError


class SequenceAdder(_RowAdder):
    """Fixed-length windows of ``sequence_length`` rows every ``period`` rows (ACME's SequenceAdder).

    The first window is written once ``sequence_length`` rows exist, then every ``period`` rows
    (windows overlap when ``period < sequence_length``). At the episode end
    (``end_of_episode_behavior``):

    * ``'zero_pad'`` (default, ACME's default): pad with ``mask=False`` rows up to the next write
      point and write that window, so every item has the same length and (with
      ``period <= sequence_length``) every step lands in some window;
    * ``'truncate'``: write the rows since that window's start without padding (a shorter item);
    * ``'write'``: write the last full window, ending at the final observation (an episode
      shorter than the window yields nothing).

    With ``period > sequence_length`` an episode that ends in the gap between two windows adds
    no padded or truncated window (it would hold no row of that gap).

    A window never spans two episodes (ACME's ``'continue'`` is refused).
    """

    def __init__(
        self,
        on_generate: Callable[[Dict[str, object]], object],
        sequence_length: int,
        period: int,
        end_of_episode_behavior: str = "zero_pad",
    ) -> None:
        super().__init__(on_generate)
        for name, value in (("sequence_length", sequence_length), ("period", period)):
            if isinstance(value, bool) or int(value) != value or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if end_of_episode_behavior not in END_OF_EPISODE_BEHAVIORS:
            extra = " (windows never span two episodes in Stride)" if end_of_episode_behavior == "continue" else ""
            raise ValueError(
                f"unknown end_of_episode_behavior {end_of_episode_behavior!r}{extra}; "
                f"valid choices: {', '.join(END_OF_EPISODE_BEHAVIORS)}"
            )
        self.sequence_length = int(sequence_length)
        self.period = int(period)
        self.end_of_episode_behavior = end_of_episode_behavior

    def _append(self, row: Dict[str, Any]) -> None:
        self._rows.append(row)
        if len(self._rows) > self.sequence_length:  # keep only what a window can still use
            del self._rows[0]
        if not row["last"] and self._is_write_point(self._episode_rows):
            self._emit(self._rows)

    def _is_write_point(self, count: int) -> bool:
        return count >= self.sequence_length and (count - self.sequence_length) % self.period == 0

    def _finish(self, end: str) -> None:
        count = self._episode_rows
        if count <= self.sequence_length:
            delta = self.sequence_length - count
        else:
            delta = (self.period - (count - self.sequence_length)) % self.period
        behavior = self.end_of_episode_behavior
        if behavior == "write":  # the last full window, always ending at the final observation
            if count >= self.sequence_length:
                self._emit(self._rows[-self.sequence_length :])
            return
        real = self.sequence_length - delta  # real rows in the window that ends at the next write point
        if real <= 0:  # period > sequence_length and the episode ended in a gap between windows
            return
        if behavior == "zero_pad":
            self._emit(self._rows[-real:] + [self._padding_row() for _ in range(delta)])
        else:  # 'truncate'
            self._emit(self._rows[-real:])


class EpisodeAdder(_RowAdder):
    """Deprecated: the whole episode as one item when it ends (ACME's EpisodeAdder).

    An episode longer than ``max_sequence_length`` rows (final observation row included) raises
    ``ValueError`` at the step that exceeds it, and the episode is dropped. With
    ``pad_to_max=True`` items are padded with ``mask=False`` rows to ``max_sequence_length``.
    """

    def __init__(
        self, on_generate: Callable[[Dict[str, object]], object], max_sequence_length: int, pad_to_max: bool = False
    ) -> None:
        _deprecated("EpisodeAdder", "collect whole episodes with stride.worker.EpisodeCollector, or fixed "
                    "windows with SequenceAdder")
        super().__init__(on_generate)
        if isinstance(max_sequence_length, bool) or int(max_sequence_length) != max_sequence_length or max_sequence_length < 2:
            raise ValueError(f"max_sequence_length must be an integer >= 2, got {max_sequence_length!r}")
        self.max_sequence_length = int(max_sequence_length)
        self.pad_to_max = bool(pad_to_max)

    def _append(self, row: Dict[str, Any]) -> None:
        # Room must stay for the final observation row unless this is it.
        limit = self.max_sequence_length if row["last"] else self.max_sequence_length - 1
        if len(self._rows) + 1 > limit:
            self.reset()
            raise ValueError(
                f"episode longer than max_sequence_length={self.max_sequence_length} rows "
                "(the final observation takes a row); the episode was dropped"
            )
        self._rows.append(row)

    def _finish(self, end: str) -> None:
        rows = list(self._rows)
        if self.pad_to_max:
            rows += [self._padding_row() for _ in range(self.max_sequence_length - len(rows))]
        self._emit(rows)
