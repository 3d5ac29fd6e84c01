"""The run core: what every entry's run is made of, in one place, so no entry assembles it by hand.

A :class:`Run` is built from a compiled config and the run's mode (``serial``, ``offline``,
``league``, ``parallel``, ``dist``; see :mod:`~stride.entry.run_state`), its limits, the checkpoint
it resumes from and the progress flag. Used as a context manager, it owns:

- seeding and torch's threads (on entry: :func:`seed_run`);
- the experiment folder (:meth:`Run.open`: ``make_exp_dir``, provisional until :meth:`Run.start`,
  so a run that fails while it is built leaves no folder), the saved config and ``run.json``
  (mode and limits; on resume the limits it was started with, and :meth:`Run.already_finished`);
- the TensorBoard writer (``run.tb``), closed on exit;
- the checkpoint components (:meth:`Run.register_state`, by name, in order): a local learner's
  checkpoint carries them (:meth:`Run.start` registers them on it); a REMOTE learner (a Ray actor)
  gets their states from :meth:`Run.components_state` and hands them back to
  :meth:`Run.load_components` -- the core needs no local :class:`BaseLearner`, only a
  :class:`LearnerHandle` (``train_iter``, ``last_log``, ``save_checkpoint``);
- Ctrl-C / SIGTERM (:meth:`Run.signals`, :attr:`Run.stop_requested`, :meth:`Run.halt`; outside the
  loop SIGTERM is Ctrl-C: :func:`~stride.entry.utils.sigterm_as_ctrl_c`);
- the clocks and evaluations (``run.record``: :class:`EvalRecorder`, ``progress.csv``) and the
  end (:meth:`Run.finish`: final checkpoint, limits, ``result.json``);
- the user's callbacks (:class:`RunCallback`, :class:`StopRun`) and learner hooks
  (:class:`~stride.worker.learner.hooks.LearnerHook`), given to any entry as ``callbacks=[...]``.

An entry keeps only what is its own: what it builds (envs, policy, workers) and its loop, which
calls ``run.collected`` / ``run.trained`` / ``run.evaluate`` and checks ``run.stop_requested``.

Callbacks, as SB3's ``callback=`` and DI-engine's learner hooks, but one list for every entry::

    class Log(RunCallback):
        def on_eval(self, row):            # each evaluation's progress.csv row (+ 'stop')
            print(row["envstep"], row["eval_return_mean"])
        def on_train(self, train_iter, log):
            return train_iter >= 500       # True: stop cleanly (checkpoint, result.json; resumable)

    serial_pipeline(cfg, callbacks=[Log(), MyLearnerHook()])

Better than the peers on purpose: SB3's ``callback`` returning False stops ``learn`` but leaves no
checkpoint or record of why; DI-engine's hooks reach the learner only. Here a stop is a checkpoint
and a ``result.json`` (``stopped_by``) that ``--resume`` continues from, in every entry.
"""

from __future__ import annotations

import contextlib
import os
from types import TracebackType
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple, Type, Union

import torch

from ..config import Config, save_config
from ..config.compile import keep_exp_dirs, make_exp_dir, provisional_exp_dirs
from ..policy.base_policy import Policy
from ..utils.files import atomic_write_json
from ..utils.narrow import as_mapping
from ..utils.log import ProgressCSV, TBWriter, build_tb_writer
from ..utils.seed import set_pkg_seed
from ..worker import BaseLearner, BaseSerialEvaluator, EvalAbandoned
from ..worker.learner.hooks import HookHost, LearnerHook
from ..worker.learner.learner import read_checkpoint
from ..worker.protocols import Stateful
from .clock import RunClock
from .progress import ProgressBar
from .run_state import RESULT_FILE, RESUMED_BY, finished, read_limits, read_result, record_run, write_limits
from .utils import Interrupt, sigterm_as_ctrl_c


class StopRun(Exception):
    """Raised by a run callback or a learner hook: stop the run cleanly at the next loop boundary
    (as Ctrl-C does: a checkpoint is saved and ``result.json`` written, with ``stopped_by`` naming
    the callback and the message); the run is not finished, so ``--resume`` continues it. Any
    other exception a callback raises ends the run at once and propagates (``-m tune`` prunes so)."""


class RunCallback:
    """Base class of a run's callbacks: override the methods you need. Every method but
    :meth:`on_run_end` may return True (or raise :class:`StopRun`) to stop the run cleanly.

    Called by every entry's loop: ``on_run_start`` once built (the :class:`Run`: ``exp_dir``,
    ``cfg``, ``tb``), ``on_collect`` after each collect (warm-up included; not offline),
    ``on_train`` after each ``learner.train`` (its log), ``on_eval`` after each evaluation (the
    ``progress.csv`` row, or the league's ``league.csv`` row, with ``stop``), ``on_run_end``
    with the result once ``result.json`` is written (not when the run fails)."""

    def on_run_start(self, run: "Run") -> Optional[bool]:
        """The run is built (resumed state loaded) and its loop starts."""
        return None

    def on_collect(self, envstep: int, train_iter: int) -> Optional[bool]:
        """A collect ended at ``envstep`` env steps."""
        return None

    def on_train(self, train_iter: int, log: Mapping[str, object]) -> Optional[bool]:
        """``learner.train`` made its ``train_iter``-th step; ``log``: what the policy returned."""
        return None

    def on_eval(self, row: Mapping[str, object]) -> Optional[bool]:
        """An evaluation ended; ``row``: its record (``stop``: whether it reached the stop value)."""
        return None

    def on_run_end(self, run: "Run", result: Mapping[str, object]) -> None:
        """The run ended; ``result``: what ``result.json`` holds."""


class EvalFunction(RunCallback):
    """``on_eval=fn`` of the entries as a callback: ``fn(row)`` after each evaluation; what it
    returns is ignored, what it raises ends the run."""

    def __init__(self, fn: Callable[[Dict[str, object]], object]) -> None:
        self.fn = fn

    def on_eval(self, row: Mapping[str, object]) -> Optional[bool]:
        self.fn(dict(row))
        return None


#: what ``callbacks=`` takes: run callbacks and learner hooks (registered on the run's learner)
Callback = Union[RunCallback, LearnerHook]


def with_on_eval(callbacks: Optional[Sequence[Callback]],
                 on_eval: Optional[Callable[[Dict[str, object]], object]]) -> List[Callback]:
    """``callbacks`` with the entries' older ``on_eval=`` function added as one (:class:`EvalFunction`)."""
    out = list(callbacks or [])
    if on_eval is not None:
        out.append(EvalFunction(on_eval))
    return out


class LearnerHandle(Protocol):
    """What the run core needs of a learner, local (:class:`BaseLearner`) or remote (a Ray
    coordinator's proxy of its learner actor)."""

    @property
    def train_iter(self) -> int:
        """Optimisation steps done."""

    @property
    def last_log(self) -> Mapping[str, float]:
        """The learner's latest averaged log (what evaluation rows add as ``learner_*``)."""

    def save_checkpoint(self, ckpt_name: Optional[str] = None, /) -> Optional[str]:
        """Write a checkpoint now; its path (None where nothing is written)."""


def seed_run(cfg: Config, seed: Optional[int] = None) -> None:
    """Seed every RNG with ``seed`` (default ``cfg.seed``) and set torch's threads to ``cfg.num_threads``:
    what every entry does before it builds anything."""
    torch.set_num_threads(int(cfg.num_threads))
    set_pkg_seed(int(cfg.seed if seed is None else seed), use_cuda=bool(cfg.policy.cuda))


@contextlib.contextmanager
def denormals_flushed() -> Iterator[None]:
    """Denormal floats flushed to zero inside, the caller's setting back after: a run trains this
    way (:class:`Run` for a whole serial run, a Ray learner role per train call), and the user's
    process keeps its own floating-point setting.

    Why: Adam's moments of units whose gradient is zero (dead ReLUs) decay geometrically into the
    denormal range, where x86 arithmetic is 10-100x slower; a Pong DQN learner slowed from 10 to 6.5
    updates/s over 3,000 updates that way (its Adam step from 3.5 to 17 ms). Values under 1.2e-38
    change no learning; PyTorch keeps them by default (so do SB3 and Tianshou), TensorFlow flushes."""
    before = bool(torch.tensor([1e-323], dtype=torch.float64).item() == 0.0)  # torch has no getter
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


def resumed_limits(exp_dir: str, max_env_step: Optional[int], max_train_iter: Optional[int]
                   ) -> Union[Dict[str, object], Tuple[Optional[int], Optional[int]]]:
    """A resumed run's limits: the ones given, else the ones it was started with (recorded again
    when given); the run's result instead when it already ended within them."""
    saved_env_step, saved_train_iter = read_limits(exp_dir)
    given = (max_env_step, max_train_iter) != (None, None)
    max_env_step = saved_env_step if max_env_step is None else max_env_step
    max_train_iter = saved_train_iter if max_train_iter is None else max_train_iter
    done = read_result(exp_dir)
    if done is not None and finished(done, max_env_step, max_train_iter):
        return done
    if given:
        write_limits(exp_dir, max_env_step, max_train_iter)
    return max_env_step, max_train_iter


class EvalRecorder:
    """A run's evaluations and their ``progress.csv`` rows (in ``exp``; none without it), with the
    run's clocks (:class:`~stride.entry.clock.RunClock`: train CPU-seconds are the process's CPU
    time less the evaluations', what the benchmarks compare). Every entry evaluates through it
    (``run.record``). It is a checkpoint component (``state_dict``: the clocks), so a resumed
    run's ``result.json`` and ``progress.csv`` count the whole run, not the last process."""

    def __init__(self, exp: Optional[str]) -> None:
        self.csv = ProgressCSV(os.path.join(exp, "progress.csv")) if exp is not None else None
        self.clock = RunClock()
        self.last_return: Optional[float] = None  # the latest decisive mean (the confirmation's where one ran)

    def train_cpu(self) -> float:
        """CPU seconds spent so far outside evaluations."""
        return self.clock.train_cpu()

    def evaluate(self, evaluator: BaseSerialEvaluator, learner: LearnerHandle, envstep: int,
                 extra: Optional[Mapping[str, object]] = None, should_stop: Optional[Callable[[], bool]] = None
                 ) -> Tuple[bool, Optional[Dict[str, object]]]:
        """One evaluation (best checkpoint saved through the learner) and its CSV row (``extra``
        columns before the learner's); returns ``(stop, row)``, or ``(False, None)`` for an
        evaluation ``should_stop`` cut short (no row: the point is evaluated again on resume)."""
        try:
            stop, returns = evaluator.eval(learner.save_checkpoint, learner.train_iter, envstep,
                                           should_stop=should_stop)
        except EvalAbandoned:
            self.clock.add_eval(evaluator.last_eval_cpu_seconds)
            return False, None
        self.clock.add_eval(evaluator.last_eval_cpu_seconds)
        self.last_return = evaluator.last_eval_return
        if evaluator.last_confirm_return is not None:  # the decisive evaluation
            self.last_return = evaluator.last_confirm_return
        row = {"train_iter": learner.train_iter, "envstep": envstep,
               # the screen's mean, and the confirmation's where one ran (the decisive one)
               "eval_return_mean": evaluator.last_eval_return,
               "confirm_return_mean": evaluator.last_confirm_return,
               "eval_return_min": min(returns), "eval_return_max": max(returns),
               "train_cpu_seconds": round(self.clock.train_cpu(), 3),
               "wall_seconds": round(self.clock.wall(), 3),
               **dict(extra or {}),
               **{f"learner_{k}": v for k, v in learner.last_log.items()}}
        if self.csv is not None:
            self.csv.write(row)
        return stop, row

    def state_dict(self) -> Dict[str, object]:
        """The clocks so far."""
        return self.clock.state_dict()

    def load_state_dict(self, state_dict: Mapping[str, object]) -> None:
        """Go on from saved clocks."""
        self.clock.load_state_dict(state_dict)

    def summary(self) -> Dict[str, object]:
        """The result's timing and return entries."""
        return {"eval_return": self.last_return, "train_cpu_seconds": self.clock.train_cpu(),
                "eval_cpu_seconds": self.clock.eval_cpu, "wall_seconds": self.clock.wall()}


def final_checkpoint(exp: Optional[str], train_iter: int) -> Optional[str]:
    """The path of the checkpoint a run's end leaves (the learner's ``after_run`` one)."""
    return os.path.join(exp, "ckpt", f"iteration_{train_iter}.pth.tar") if exp is not None else None


def load_policy(policy: Policy, ckpt: str) -> None:
    """Put the policy state of a learner's checkpoint (``ckpt``, a path) into ``policy``."""
    policy.learn_mode.load_state_dict(dict(as_mapping(read_checkpoint(ckpt)["policy"], "checkpoint 'policy'")))


def return_best(policy: Policy, evaluator: BaseSerialEvaluator, result: Dict[str, object]) -> None:
    """``policy.eval.evaluator.return_best``: a run that ended at its limits (neither on the stop
    rule nor interrupted: an interrupted run goes on from its last state) gets the policy of its
    best evaluation, from ``ckpt_best.pth.tar``; ``result`` says which it returns (``returned``:
    ``'best'`` / ``'last'``, and the best evaluation's ``best_eval``). The final checkpoint still
    holds the last state, which ``--resume`` continues from. As SB3's ``EvalCallback(best_model_save_path)``
    and Tianshou's ``save_best_fn``, but the run *returns* it, and (with ``confirm_episode``) the
    best is ranked by 100-episode confirmations, not by one lucky screen."""
    best = evaluator.best
    result["best_eval"] = None if best is None else best.state_dict()
    result["returned"] = "last"
    if (evaluator.return_best and best is not None and best.checkpoint is not None
            and not result.get("stop") and not result.get("interrupted")):
        load_policy(policy, best.checkpoint)
        result["returned"] = "best"


class _GuardedHook(LearnerHook):
    """A user's learner hook as the run registers it: its :class:`StopRun` becomes the run's stop
    request (at the next loop boundary) instead of an exception inside ``learner.train``."""

    def __init__(self, hook: LearnerHook, run: "Run") -> None:
        super().__init__(hook.name, hook.position, hook.priority, hook.freq)
        self.hook, self.run = hook, run

    def __call__(self, learner: HookHost) -> None:
        try:
            self.hook(learner)
        except StopRun as e:
            self.run.request_stop(f"{type(self.hook).__name__}: {e}" if str(e) else type(self.hook).__name__)


class Run:
    """One run: see the module docstring. Use as ``with Run(...) as run:``.

    Args:
        cfg: the compiled config (``cfg.exp_name``: the folder to make, or the resumed run's).
        mode: the mode ``run.json`` records (:data:`~stride.entry.run_state.RESUMED_BY`'s keys).
        max_env_step / max_train_iter: the limits (None: none; on resume, see :meth:`already_finished`).
        resume_ckpt: the checkpoint a resumed run loads (None: a new run).
        progress: show a progress bar / lines (:meth:`bar`).
        callbacks: :class:`RunCallback` objects and learner hooks (``LearnerHook``).
        writes: False for a process that writes nothing (a learner replica other than rank 0).
        workers: a league's collector actors (recorded in ``run.json``).
        seed: seed the RNGs and threads on entry (False: the entry seeds elsewhere, e.g. on Ray).
    """

    def __init__(self, cfg: Config, mode: str, *, max_env_step: Optional[int] = None,
                 max_train_iter: Optional[int] = None, resume_ckpt: Optional[str] = None, progress: bool = True,
                 callbacks: Optional[Sequence[Callback]] = None, writes: bool = True, workers: int = 1,
                 seed: bool = True) -> None:
        if mode not in RESUMED_BY:
            raise ValueError(f"unknown run mode {mode!r}; valid choices: {', '.join(RESUMED_BY)}")
        for cb in callbacks or ():
            if not isinstance(cb, (RunCallback, LearnerHook)):
                raise TypeError(f"callbacks: {cb!r} is a {type(cb).__name__}; valid choices: a RunCallback "
                                "(stride.entry.run) or a LearnerHook (stride.worker)")
        self.cfg, self.mode = cfg, mode
        self.max_env_step, self.max_train_iter = max_env_step, max_train_iter
        self.resume_ckpt, self.progress, self.writes, self.workers = resume_ckpt, progress, writes, workers
        self.callbacks: List[RunCallback] = [c for c in callbacks or () if isinstance(c, RunCallback)]
        #: the user's learner hooks: :meth:`start` registers them on a local learner (a remote one takes them itself)
        self.learner_hooks: List[LearnerHook] = [c for c in callbacks or () if isinstance(c, LearnerHook)]
        self.exp: Optional[str] = None  # set by open() (None: nothing is written)
        self.tb: Optional[TBWriter] = None
        self.record = EvalRecorder(None)
        self.components: Dict[str, Stateful] = {}
        self.stopped_by: Optional[str] = None
        self.halted = False
        self._seed = seed
        self._interrupt: Optional[Interrupt] = None
        self._stack = contextlib.ExitStack()
        self._learner: Optional[BaseLearner] = None

    # ---- lifetime ----------------------------------------------------------------------------
    def __enter__(self) -> "Run":
        self._stack.enter_context(sigterm_as_ctrl_c())
        self._stack.enter_context(provisional_exp_dirs())
        self._stack.enter_context(denormals_flushed())
        if self._seed:
            seed_run(self.cfg)
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                 tb: Optional[TracebackType]) -> Optional[bool]:
        self.close()
        return self._stack.__exit__(kind, error, tb)

    def close(self) -> None:
        """Close the TensorBoard writer (again: nothing)."""
        if self.tb is not None:
            self.tb.close()
            self.tb = None

    def already_finished(self) -> Optional[Dict[str, object]]:
        """For a resumed run: settle its limits (those given, else those it was started with;
        recorded again when given) and return its result when it already ended within them
        (nothing is to be trained or written then); None to go on (always for a new run)."""
        if self.resume_ckpt is None:
            return None
        limits = resumed_limits(self.cfg.exp_name, self.max_env_step, self.max_train_iter)
        if isinstance(limits, dict):
            return limits
        self.max_env_step, self.max_train_iter = limits
        return None

    def open(self, files: Optional[Mapping[str, Mapping[str, object]]] = None, renew: bool = True) -> Optional[str]:
        """The experiment folder: a new run's is made (``renew``: an existing name gets a suffix;
        False: used as it is), with the saved config, ``files`` (name -> JSON object, e.g.
        ``system_config.json``) and ``run.json``; a resumed run's is the one it has. Opens the
        TensorBoard writer and the evaluation recorder there; returns the folder (None where
        nothing is written). The folder stays provisional until :meth:`start`."""
        if self.writes:
            if self.resume_ckpt is None:
                self.cfg.exp_name = make_exp_dir(self.cfg.exp_name, renew=renew)
                save_config(self.cfg, self.cfg.exp_name)
                for name, content in (files or {}).items():
                    atomic_write_json(os.path.join(self.cfg.exp_name, name), dict(content))
                record_run(self.cfg.exp_name, self.mode, self.max_env_step, self.max_train_iter, workers=self.workers)
            self.exp = self.cfg.exp_name
        self.tb = build_tb_writer(self.exp)
        self.record = EvalRecorder(self.exp)
        return self.exp

    # ---- checkpoint components ---------------------------------------------------------------
    def register_state(self, name: str, component: Optional[Stateful]) -> None:
        """Put ``component``'s state in the run's checkpoints under ``name`` (None: nothing);
        components load in the order they were registered."""
        if component is None:
            return
        if name in self.components:
            raise ValueError(f"checkpoint component '{name}' is registered twice")
        self.components[name] = component
        if self._learner is not None:
            self._learner.register_state(name, component)

    def components_state(self) -> Dict[str, object]:
        """Every component's state (what a remote learner's checkpoint carries)."""
        return {name: comp.state_dict() for name, comp in self.components.items()}

    def load_components(self, states: Mapping[str, Mapping[str, object]]) -> None:
        """Restore the components from a checkpoint's states (a remote learner's), in order."""
        for name, comp in self.components.items():
            if name in states:
                comp.load_state_dict(states[name])

    def attach(self, learner: BaseLearner) -> None:
        """A local learner joins the run: it gets the components (its checkpoints carry them) and
        the user's learner hooks, runs its ``before_run`` hooks and (resumed) loads the checkpoint.
        (A remote learner is not attached: see :meth:`components_state`.)"""
        self._learner = learner
        for name, comp in self.components.items():
            learner.register_state(name, comp)
        for hook in self.learner_hooks:
            learner.register_hook(_GuardedHook(hook, self))
        learner.call_hook("before_run")
        if self.resume_ckpt is not None:
            learner.load_checkpoint(self.resume_ckpt)

    def start(self, learner: Optional[BaseLearner] = None) -> None:
        """The run is built and its loop starts (``learner``: :meth:`attach` it first). From here
        the folder is the run's (no longer provisional); the callbacks' ``on_run_start`` run last."""
        if learner is not None:
            self.attach(learner)
        keep_exp_dirs()
        self._call(lambda cb: cb.on_run_start(self))

    # ---- the loop ----------------------------------------------------------------------------
    def bar(self, total: float, initial: int = 0, unit: str = "env steps") -> ProgressBar:
        """The run's progress bar (lines where stdout is no terminal; nothing without ``progress``)."""
        return ProgressBar(enabled=self.progress, total=total, initial=initial, unit=unit)

    @contextlib.contextmanager
    def signals(self) -> Iterator[Interrupt]:
        """Inside: the first SIGINT / SIGTERM is a stop request (:attr:`stop_requested`), a second stops at once."""
        with Interrupt() as interrupt:
            self._interrupt = interrupt
            yield interrupt

    @property
    def stop_requested(self) -> bool:
        """Whether a signal or a callback asked the run to stop (checked at each loop boundary)."""
        return self.stopped_by is not None or (self._interrupt is not None and self._interrupt.requested)

    def request_stop(self, reason: str) -> None:
        """Ask the run to stop at its next loop boundary (what a callback's True / :class:`StopRun` does)."""
        if self.stopped_by is None:
            self.stopped_by = reason

    def halt(self, save: Callable[[], object]) -> None:
        """Stop at a request: ``save()`` the checkpoint now (the loop breaks after)."""
        self.halted = True
        save()

    def _call(self, method: Callable[[RunCallback], Optional[bool]]) -> None:
        for cb in self.callbacks:
            try:
                if method(cb):
                    self.request_stop(type(cb).__name__)
            except StopRun as e:
                self.request_stop(f"{type(cb).__name__}: {e}" if str(e) else type(cb).__name__)

    def collected(self, envstep: int, train_iter: int) -> None:
        """After a collect: the callbacks' ``on_collect``."""
        if self.callbacks:
            self._call(lambda cb: cb.on_collect(envstep, train_iter))

    def trained(self, train_iter: int, log: Mapping[str, object]) -> None:
        """After a ``learner.train``: the callbacks' ``on_train``."""
        if self.callbacks:
            self._call(lambda cb: cb.on_train(train_iter, log))

    def evaluated(self, row: Mapping[str, object]) -> None:
        """After an evaluation the entry made itself (the league's): the callbacks' ``on_eval``."""
        if self.callbacks:
            self._call(lambda cb: cb.on_eval(row))

    def evaluate(self, evaluator: BaseSerialEvaluator, learner: LearnerHandle, envstep: int,
                 extra: Optional[Mapping[str, object]] = None) -> bool:
        """One evaluation through ``run.record`` (its ``progress.csv`` row), then the callbacks'
        ``on_eval`` with the row and ``stop``; returns whether it reached the stop value. A signal
        that arrives during the evaluation cuts it short (no row, no ``on_eval``, False): the
        loop's next stop check saves the checkpoint within one env step, not after the episodes."""
        stop, row = self.record.evaluate(evaluator, learner, envstep, extra, should_stop=self.signalled)
        if row is None:
            return False
        self.evaluated(dict(row, stop=bool(stop)))
        return stop

    def signalled(self) -> bool:
        """Whether a SIGINT / SIGTERM asked the run to stop (what cuts an evaluation short)."""
        return self._interrupt is not None and self._interrupt.requested

    def outcome(self) -> Dict[str, object]:
        """The result's ``interrupted`` / ``signal`` / ``stopped_by`` entries."""
        signal = None if self._interrupt is None else self._interrupt.signal_name
        by_callback = self.stopped_by is not None and signal is None
        return {"interrupted": self.halted and not by_callback, "signal": signal,
                **({"stopped_by": self.stopped_by} if self.stopped_by is not None else {})}

    def finish(self, result: Dict[str, object], train_iter: int, replicas: int = 1) -> Dict[str, object]:
        """The run's end: ``result`` with the final checkpoint and the limits added, written
        atomically to ``<exp>/result.json`` (what ``--resume`` reads); then ``on_run_end``."""
        result.update(final_checkpoint=final_checkpoint(self.exp, train_iter), max_env_step=self.max_env_step,
                      max_train_iter=self.max_train_iter, replicas=replicas)
        if self.exp is not None:
            atomic_write_json(os.path.join(self.exp, RESULT_FILE), result)
        for cb in self.callbacks:
            cb.on_run_end(self, result)
        return result
