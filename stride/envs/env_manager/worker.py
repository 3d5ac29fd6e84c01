"""The worker process of the subprocess env managers: a few envs, one pipe, one command loop.

Protocol: every message is one pickled tuple, framed as ``Connection.send_bytes`` frames it
(``wire.py``), one message per worker per manager call, whatever the number of envs it hosts.
Commands and replies travel on a one-way pipe each way (a pipe's read and write cost about half
a socket's); the socket pair the process starts with carries the handshake and the descriptors
(shared-memory block, then the two pipe ends). The parent sends

==============================================  ==================================================
``("step", slots, actions, reset_seeds)``       step each env and reply; then reset in place each
                                                env that ended its episode and whose reset seed is
                                                not ``NO_RESET`` (saves a command per episode),
                                                and send an ``("autoreset", results)`` reply
``("reset", slots, seeds, kwargs)``             reset each env with its seed and kwargs
``("seed", slots, seeds, dynamic_seed)``        ``env.seed(...)`` (the env's own stream, action space)
``("replay", slots, seeds, kwargs, actions)``   reset with the seed and re-apply the actions (resume)
``("call", slots, name, args)``                 ``getattr(env, name)(*args)`` for each env
``("close",)``                                  close the envs, acknowledge and exit
==============================================  ==================================================

and gets back ``(command, [result per slot])`` (every command but ``close``); a step's reply is
``("step", results, positions)``, where ``positions`` (indices into the command's slots) are the
envs it now resets in place: an ``("autoreset", [reset result per position])`` reply follows, so
the parent times each env's step against ``step_timeout`` and each reset against
``reset_timeout`` (one reply for both could not tell a hung step from a slow reset). A step result
is ``(OK, reward, done, info, obs)`` (``obs`` is the final one when the episode ended); ``(CRASH,
error_text)`` for an exception in the env (the parent closes the episode as abnormal and retries),
``(USER, pickled_exception)`` for a ``StrideError`` (re-raised in the parent, never retried; an
observation that does not fit the space is one), ``(NONFINITE, what, env_label)`` for a NaN or
infinite reward or observation (the parent raises or drops it, per ``nonfinite``). Steps and
resets are checked by the same function as in the base manager (``checks.py``).
Observations go into the shared-memory slot when there is one (then ``obs`` is None), except the
final observation of an episode, which travels in the message because the slot already holds the
next episode's first observation.

Between commands the child polls its pipe for up to ``spin_s`` before it blocks (the next command
of a stepping loop usually arrives sooner than a blocked process is woken). The child ignores
SIGINT (the parent owns Ctrl-C), is killed by the kernel when its parent dies, even while stuck
in env code (``lifeline.py``: the fork server, which exits when the main process does), and
exits on pipe EOF.
"""

from __future__ import annotations

import os
import pickle
import signal
import traceback
from typing import Any, List, Optional, Tuple

import cloudpickle

from ...utils.errors import StrideError
from .checks import ObservationShapeError, env_label, find_problem, make_step_check, shape_message
from .lifeline import die_with_parent, forkserver_guarded
from .shm import ObsBlock
from .spin import SpinWait, make_poller
from .wire import recv_blob, send_blob

OK, CRASH, USER, NONFINITE = 0, 1, 2, 3
NO_RESET = -1
_PROTO = pickle.HIGHEST_PROTOCOL


def _user_error(e: BaseException) -> tuple:
    try:
        blob = pickle.dumps(e, _PROTO)
        pickle.loads(blob)
    except Exception:
        blob = pickle.dumps(StrideError(f"{type(e).__name__}: {e}"), _PROTO)
    return (USER, blob)


def _crash(e: BaseException) -> tuple:
    return (CRASH, f"{type(e).__name__}: {e}\n{''.join(traceback.format_exception(e)[-3:])}")


def _put_obs(block: Optional[ObsBlock], slot: int, obs: Any) -> Any:
    """Write ``obs`` into the slot (returning None) or return it to be sent in the message."""
    if block is None:
        return obs
    try:
        block.write(slot, obs)
    except ValueError as e:
        raise StrideError(f"{e}; observations that do not match observation_space need shared_memory=False") from None
    return None


def _send(fd_out: int, reply: tuple) -> bool:
    """Send one reply; False when the parent is gone."""
    try:
        blob = pickle.dumps(reply, _PROTO)
    except Exception as e:  # e.g. an info dict holding a lock
        error = _user_error(StrideError(f"cannot send an env's result to the parent: {e!r}"))
        blob = pickle.dumps((reply[0], [error] * len(reply[1])) + tuple(reply[2:]), _PROTO)
    try:
        send_blob(fd_out, blob)
    except OSError:
        return False
    return True


def _next_message(fd: int, poller: Any, spin: SpinWait) -> Any:
    """The next command (None on EOF), polled for a moment before blocking (spin.py)."""
    if poller is None or not spin.poll([poller], spin.spin_s):
        spin.blocking()
        try:
            blob = recv_blob(fd)
        except (EOFError, OSError):
            return None
        spin.blocked()
        return pickle.loads(blob)
    try:
        return pickle.loads(recv_blob(fd))
    except (EOFError, OSError):
        return None


def worker_main(conn: Any, env_fns_blob: bytes, env_seeds: List[Optional[int]], dynamic_seed: bool,
                shm_layout: Optional[list], spin_s: float = 0.0, own_processes: int = 2,
                env_ids: Optional[List[int]] = None, finite: bool = True,
                parent: Optional[Tuple[Optional[int], bool]] = None) -> None:
    """Run the envs built from ``env_fns_blob`` (cloudpickled factories) until ``close`` or EOF.

    ``env_ids``: the manager's indices of these envs (for messages); ``finite``: check rewards and
    observations for NaN and inf (observation shapes are always checked); ``parent``: the pid this
    process must die with (None: its parent, the fork server) and whether that process started it
    from its main thread (``lifeline.die_with_parent``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid, from_main_thread = parent if parent is not None else (None, True)
    die_with_parent(parent_pid, from_main_thread)
    envs: list = []
    block: Optional[ObsBlock] = None
    fd = fd_out = -1
    try:
        from multiprocessing.reduction import recv_handle

        if shm_layout is not None:
            block = ObsBlock(shm_layout, len(env_seeds), fd=recv_handle(conn))
        fd, fd_out = recv_handle(conn), recv_handle(conn)  # commands in, replies out (one-way pipes)
        for fn, seed in zip(cloudpickle.loads(env_fns_blob), env_seeds):
            env = fn()
            if seed is not None:
                env.seed(seed, dynamic_seed=dynamic_seed)
            envs.append(env)
        conn.send_bytes(pickle.dumps(("ready", (os.getpid(), forkserver_guarded())), _PROTO))
    except BaseException as e:  # report and exit: the parent raises a clear error
        try:
            conn.send_bytes(pickle.dumps(("error", _crash(e)[1]), _PROTO))
        except Exception:
            pass
        for f in (fd, fd_out):
            if f >= 0:
                os.close(f)
        return

    ids = list(env_ids) if env_ids is not None else list(range(len(envs)))
    spaces = [env.observation_space for env in envs]
    checks = [make_step_check(space, finite) for space in spaces]

    def judge(slot: int, obs: Any, reward: Any) -> Optional[tuple]:
        """After the check said "look closer": raise for a wrong shape, NONFINITE, or None (all fine)."""
        problem = find_problem(spaces[slot], obs, reward, finite)
        if problem is None:
            return None
        if problem[0] == "shape":
            raise ObservationShapeError(shape_message(ids[slot], env_label(envs[slot]), problem[1]))
        return (NONFINITE, problem[1], env_label(envs[slot]))

    def reset_one(slot: int, seed: Optional[int], kwargs: dict) -> tuple:
        try:
            obs = envs[slot].reset(seed=seed, **kwargs)
            if not checks[slot](obs, 0.0):
                bad = judge(slot, obs, 0.0)
                if bad is not None:
                    return bad
            return (OK, _put_obs(block, slot, obs))
        except StrideError as e:
            return _user_error(e)
        except Exception as e:
            return _crash(e)

    reset_kwargs: dict = {}
    spin = SpinWait(spin_s, own_processes)
    poller = make_poller(fd) if spin.spin_s > 0 else None
    try:
        while True:
            msg = _next_message(fd, poller, spin)
            if msg is None:
                break  # the parent is gone
            cmd = msg[0]
            if cmd == "step":
                _, slots, actions, reset_seeds = msg
                results = []
                in_place: List[int] = []  # positions of the envs to reset after the reply
                for slot, action, rseed in zip(slots, actions, reset_seeds):
                    try:
                        obs, reward, done, info = envs[slot].step(action)
                        if not checks[slot](obs, reward):
                            bad = judge(slot, obs, reward)
                            if bad is not None:
                                results.append(bad)
                                continue
                        if not done:
                            results.append((OK, reward, False, info, _put_obs(block, slot, obs)))
                            continue
                    except StrideError as e:
                        results.append(_user_error(e))
                        continue
                    except Exception as e:
                        results.append(_crash(e))
                        continue
                    if rseed != NO_RESET:
                        in_place.append(len(results))
                    results.append((OK, reward, True, info, obs))
                if in_place:  # reply now: the resets are timed as resets, not as part of the step
                    if not _send(fd_out, ("step", results, in_place)):
                        break
                    results = [reset_one(slots[p], reset_seeds[p], reset_kwargs.get(slots[p], {})) for p in in_place]
                    reply: tuple = ("autoreset", results)
                else:
                    reply = ("step", results, in_place)
            elif cmd == "reset":
                _, slots, seeds, kwargs = msg
                for slot, kw in zip(slots, kwargs):
                    reset_kwargs[slot] = kw
                reply = ("reset", [reset_one(s, seed, kw) for s, seed, kw in zip(slots, seeds, kwargs)])
            elif cmd == "seed":
                _, slots, seeds, dyn = msg
                for slot, seed in zip(slots, seeds):
                    envs[slot].seed(seed, dynamic_seed=dyn)
                reply = ("seed", [None] * len(slots))
            elif cmd == "replay":
                _, slots, seeds, kwargs, action_lists = msg
                results = []
                for slot, seed, kw, acts in zip(slots, seeds, kwargs, action_lists):
                    reset_kwargs[slot] = kw
                    try:
                        obs = envs[slot].reset(seed=seed, **kw)
                        for a in acts:
                            obs, _, done, _ = envs[slot].step(a)
                            if done:
                                raise StrideError("an env ended its episode while replaying it: the env is not deterministic")
                        results.append((OK, _put_obs(block, slot, obs)))
                    except StrideError as e:
                        results.append(_user_error(e))
                    except Exception as e:
                        results.append(_crash(e))
                reply = ("replay", results)
            elif cmd == "call":
                _, slots, name, args = msg
                results = []
                for slot in slots:
                    try:
                        results.append((OK, getattr(envs[slot], name)(*args)))
                    except Exception as e:
                        results.append(_crash(e))
                reply = ("call", results)
            elif cmd == "close":
                break
            else:
                reply = ("error", f"unknown command {cmd!r}")
            if not _send(fd_out, reply):
                break
    finally:
        for env in envs:
            try:
                env.close()
            except Exception:
                pass
        if block is not None:
            block.close()
        try:
            conn.send_bytes(pickle.dumps(("closed", None), _PROTO))
        except Exception:
            pass
        conn.close()
        os.close(fd)
        os.close(fd_out)
