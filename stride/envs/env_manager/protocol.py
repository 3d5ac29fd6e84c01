"""The messages between a subprocess env manager and its worker processes: one named record per kind.

Commands (parent to worker) and replies (worker to parent) travel on a one-way pipe each way,
framed by ``wire.py``; the handshake (:class:`Ready` or :class:`BuildFailed`) travels on the
socket pair the worker starts with. One command per worker per manager call, whatever the number
of envs it hosts; the worker answers commands in order, one reply each (none for :class:`Close`):

================  ======================================================================
command           reply
================  ======================================================================
:class:`Step`     :class:`StepReply`; if its ``in_place`` is not empty, the worker then
                  resets those envs and sends a :class:`ResetReply` for them ("autoreset")
:class:`Reset`    :class:`ResetReply`
:class:`Replay`   :class:`ResetReply` (reset with the seed, then the actions re-applied)
:class:`Seed`     :class:`CallReply` (values all None)
:class:`Call`     :class:`CallReply`
:class:`Close`    none: the worker closes its envs and exits
================  ======================================================================

Per-env fields are columns: position ``k`` is the env in the command's ``slots[k]``. An env whose
command failed has a record in the reply's ``failures`` (``{position: failure}``) and None in the
columns: :class:`Crash` (an exception in env code: the episode is closed as abnormal, a reset is
retried), :class:`UserError` (a ``StrideError``, e.g. an action outside the space: re-raised in the
parent, never retried), :class:`NonFinite` (a NaN or infinite reward or observation: raised or
dropped per ``nonfinite``). Observations are in the shared-memory slot when there is one (the
column holds None), except the final observation of an episode, which the slot cannot hold (it
already holds the next episode's first one).

On the wire, :func:`encode` pickles a record as ``(tag, plain tuple)`` and :func:`decode` rebuilds
it: pickling the records themselves costs ~2.5 us more per message (pickle looks the class up by
import for every message), which is measurable on a stepping loop of ~20 us per env step.
"""

from __future__ import annotations

import pickle
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, SupportsFloat, Tuple, Type, Union

PROTOCOL = pickle.HIGHEST_PROTOCOL
NO_RESET = -1  # a Step's reset seed meaning "do not reset this env in place if its episode ends"


# ---- what went wrong for one env ------------------------------------------------------------------
class Crash(NamedTuple):
    """An exception in env code (the text ends with the last lines of its traceback)."""

    text: str

    def describe(self) -> str:
        return self.text


class UserError(NamedTuple):
    """A ``StrideError`` raised by the env, pickled (re-raised in the parent as it was)."""

    pickled: bytes

    def error(self) -> BaseException:
        error: BaseException = pickle.loads(self.pickled)
        return error

    def describe(self) -> str:
        return str(self.error())


class NonFinite(NamedTuple):
    """A NaN or infinite reward or observation (``what`` names it) of the env called ``env_label``."""

    what: str
    env_label: str

    def describe(self) -> str:
        return f"{self.env_label}: {self.what}"


Failure = Union[Crash, UserError, NonFinite]
Failures = Dict[int, Failure]


# ---- commands ---------------------------------------------------------------------------------------
class Step(NamedTuple):
    """Step each env; an env whose episode ends and whose reset seed is not ``NO_RESET`` is reset
    in place after the reply (saves a command per episode)."""

    slots: Sequence[int]
    actions: Sequence[object]
    reset_seeds: Sequence[Optional[int]]


class Reset(NamedTuple):
    """Reset each env with its seed and keyword arguments (kept for its later in-place resets)."""

    slots: Sequence[int]
    seeds: Sequence[Optional[int]]
    kwargs: Sequence[Mapping[str, object]]


class Replay(NamedTuple):
    """Reset each env with its seed and kwargs and re-apply its actions (exact resume)."""

    slots: Sequence[int]
    seeds: Sequence[Optional[int]]
    kwargs: Sequence[Mapping[str, object]]
    actions: Sequence[Sequence[object]]


class Seed(NamedTuple):
    """``env.seed(seed, dynamic_seed=...)``: the env's own stream and its action space."""

    slots: Sequence[int]
    seeds: Sequence[Optional[int]]
    dynamic_seed: bool


class Call(NamedTuple):
    """``getattr(env, name)(*args)`` for each env."""

    slots: Sequence[int]
    name: str
    args: Tuple[object, ...]


class Close(NamedTuple):
    """Close the envs and exit (no reply)."""


Command = Union[Step, Reset, Replay, Seed, Call, Close]


# ---- replies ----------------------------------------------------------------------------------------
class StepReply(NamedTuple):
    """Columns of step results; ``obs`` holds the final observation of an ended episode, and the
    observation when there is no shared memory; ``in_place``: positions reset next ("autoreset")."""

    rewards: List[Optional[SupportsFloat]]  # None where failed
    dones: List[bool]
    infos: List[Dict[str, object]]
    obs: List[object]  # what the envs returned (None where in shared memory or failed)
    failures: Failures
    in_place: List[int]

    def all_failed(self, failure: Failure) -> StepReply:
        n = len(self.rewards)
        return StepReply([None] * n, [False] * n, [{} for _ in range(n)], [None] * n, dict.fromkeys(range(n), failure),
                         self.in_place)


class ResetReply(NamedTuple):
    """First observations (None when in shared memory) of a Reset, a Replay or an in-place reset."""

    obs: List[object]
    failures: Failures

    def all_failed(self, failure: Failure) -> ResetReply:
        n = len(self.obs)
        return ResetReply([None] * n, dict.fromkeys(range(n), failure))


class CallReply(NamedTuple):
    """Return values of a Call (None for a Seed)."""

    values: List[object]
    failures: Failures

    def all_failed(self, failure: Failure) -> CallReply:
        n = len(self.values)
        return CallReply([None] * n, dict.fromkeys(range(n), failure))


Reply = Union[StepReply, ResetReply, CallReply]


# ---- handshake --------------------------------------------------------------------------------------
class Ready(NamedTuple):
    """The worker built its envs (``forkserver_guarded``: see ``lifeline.forkserver_guarded``)."""

    pid: int
    forkserver_guarded: bool


class BuildFailed(NamedTuple):
    """The worker could not build its envs (or receive its descriptors); it exits."""

    error: str


Message = Union[Command, Reply, Ready, BuildFailed]

_RECORDS: Tuple[Type[Any], ...] = (Step, Reset, Replay, Seed, Call, Close, StepReply, ResetReply, CallReply, Ready,
                                   BuildFailed)
_TAGS: Dict[Type[Any], int] = {cls: tag for tag, cls in enumerate(_RECORDS)}
_new_tuple = tuple.__new__


def encode(message: Message) -> bytes:
    """The bytes of ``message`` (raises what pickle raises for a value that cannot be pickled)."""
    return pickle.dumps((_TAGS[type(message)], tuple(message)), PROTOCOL)


def decode(blob: bytes) -> Message:
    """The record :func:`encode` made ``blob`` from."""
    tag, fields = pickle.loads(blob)
    message: Message = _new_tuple(_RECORDS[tag], fields)
    return message


def decode_command(blob: bytes) -> Command:
    """:func:`decode` on the worker's side of the pipe, where only commands arrive."""
    tag, fields = pickle.loads(blob)
    command: Command = _new_tuple(_RECORDS[tag], fields)
    return command


def decode_reply(blob: bytes) -> Reply:
    """:func:`decode` on the parent's side of the pipe, where only replies arrive."""
    tag, fields = pickle.loads(blob)
    reply: Reply = _new_tuple(_RECORDS[tag], fields)
    return reply
