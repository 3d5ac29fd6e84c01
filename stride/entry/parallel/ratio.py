"""The replay ratio of ``-m parallel``: gradient steps per env step, held while collectors and learner overlap.

The serial pipeline's ratio is fixed by its loop: every collect of ``n_sample`` samples (of
``unroll_len`` env steps each) is followed by ``update_per_collect`` gradient steps. The parallel
pipeline collects and learns at the same time, so the ratio has to be held by counting:
:class:`ReplayRatio` is a :class:`~stride.data.rate_limiters.SampleToInsertRatio` (Reverb's, as
RL-Flow and Acme use it) whose inserts are env steps received and whose samples are gradient steps
taken. The learner is sent a train call only when the env steps allow its steps (it waits when
ahead); a collector whose batch arrives is sent its next collect only when the env steps already
received, plus those of every collect in flight, stay within ``tolerance`` env steps of what the
learner has consumed (collectors wait when too far ahead). Learning starts after ``learn_start``
env steps, and the ratio counts from there: over a run, ``gradient steps / (env steps -
learn_start)`` stays within ``tolerance x ratio`` gradient steps of ``ratio``.

Everything is counted, nothing is timed: the same arrivals give the same decisions on any machine
(unlike DI-engine's ``ThruputController``, which decays its counts over wall-clock seconds), and a
resumed run goes on from its counters. RLlib has no such limit between its env runners and learner
(``training_intensity`` only sizes the replay calls of its synchronous loop).
"""

from __future__ import annotations

import math
from typing import Dict, Optional

from ...config import Config
from ...data.rate_limiters import SampleToInsertRatio
from ...utils.errors import ConfigError


def collect_steps_of(cfg: Config) -> Optional[int]:
    """Env steps one collect of one collector takes: ``n_sample x unroll_len`` (None: an episode
    collector, whose collects have no fixed size)."""
    collect = cfg.policy.get("collect") or {}
    n_sample = collect.get("n_sample")
    return int(n_sample) * int(collect.get("unroll_len", 1) or 1) if n_sample else None


def default_tolerance(ratio: float, collectors: int, collect_steps: float, max_call: int) -> int:
    """Env steps the collectors may run ahead of the learner by default: twice what keeps both
    sides busy, every collector's collect in flight plus the env steps of one train call (the
    next call's data must be there when the running one returns)."""
    return int(math.ceil(2 * (collectors * collect_steps + max_call / ratio)))


class ReplayRatio:
    """``ratio`` gradient steps per env step after ``learn_start`` env steps, collectors at most
    ``tolerance`` env steps ahead; train calls of ``min_call`` to ``max_call`` steps, collects of
    about ``collect_steps`` env steps (the mean received replaces it once batches came).

    Pure counting, no Ray: the coordinator asks :meth:`may_collect` before sending a collector
    its next collect and :meth:`train_steps` before a train call, and reports what happened with
    :meth:`received` and :meth:`trained`."""

    def __init__(self, ratio: float, learn_start: int, tolerance: int, collect_steps: float,
                 min_call: int = 1, max_call: int = 1) -> None:
        if not (ratio > 0 and math.isfinite(ratio)):
            raise ConfigError(f"system_config.replay_ratio={ratio}: valid choices: a finite number > 0 (gradient steps "
                              "per env step)")
        if not 1 <= min_call <= max_call:
            raise ConfigError(f"train calls of {min_call} to {max_call} steps: valid choices: 1 <= min <= max")
        # Reverb's check: the window must hold 2 x max(1, ratio) samples, or a side could block for ever
        least = int(math.ceil(2 * max(1.0, ratio) / ratio))
        if tolerance < least:
            raise ConfigError(f"system_config.replay_tolerance={tolerance} env steps is too small for replay_ratio="
                              f"{ratio:g}; valid choices: >= {least}, or None (the default)")
        self.ratio, self.tolerance = float(ratio), int(tolerance)
        self.learn_start = int(learn_start)
        self.min_call, self.max_call = int(min_call), int(max_call)
        self._nominal = float(collect_steps)
        start = max(1, self.learn_start)  # Reverb's min_size_to_sample is at least one item
        #: the limiter: inserts are env steps, samples gradient steps; the error window
        #: [ratio x start, ratio x (start + tolerance)] puts the learner never ahead and the
        #: collectors at most ``tolerance`` env steps ahead
        self.limiter = SampleToInsertRatio(self.ratio, start, (self.ratio * start, self.ratio * (start + self.tolerance)))
        self.batches = 0
        self.forced = 0  # collects sent past the limit because neither side could move otherwise

    @property
    def collect_steps(self) -> float:
        """Env steps one collect is expected to bring: the mean so far (the nominal size before any)."""
        return self.limiter.inserts / self.batches if self.batches else self._nominal

    def may_collect(self, in_flight: int) -> bool:
        """Whether one more collect may be sent while ``in_flight`` collects are out."""
        return self.limiter.can_insert(int(math.ceil((in_flight + 1) * self.collect_steps)))

    def received(self, envsteps: int) -> None:
        """A batch of ``envsteps`` env steps arrived (always registered: it exists)."""
        self.limiter.insert(envsteps, force=True)
        self.batches += 1

    def train_steps(self) -> int:
        """Gradient steps the next train call may take now (0: the learner waits for env steps)."""
        allowed = self.limiter.max_samples()
        return 0 if allowed < self.min_call else int(min(allowed, self.max_call))

    def trained(self, steps: int) -> None:
        """A train call took ``steps`` gradient steps (at most what :meth:`train_steps` allowed)."""
        self.limiter.sample(steps)

    def restore(self, envstep: int, train_iter: int) -> None:
        """Counters of a run picked up at ``envstep`` env steps and ``train_iter`` gradient steps."""
        self.limiter.load_state_dict({**self.limiter.state_dict(), "inserts": envstep, "samples": train_iter,
                                      "deletes": 0})

    def achieved(self) -> Optional[float]:
        """Gradient steps per env step since ``learn_start`` (None: not past it yet)."""
        after = self.limiter.inserts - self.learn_start
        return self.limiter.samples / after if after > 0 else None

    def summary(self) -> Dict[str, object]:
        """What ``result.json`` reports: the target, the ratio achieved and the limits."""
        achieved = self.achieved()
        return {"replay_ratio": self.ratio, "replay_ratio_achieved": None if achieved is None else round(achieved, 6),
                "learn_start": self.learn_start, "replay_tolerance": self.tolerance, "forced_collects": self.forced}


def compile_ratio(cfg: Config, sys_cfg: Config) -> ReplayRatio:
    """The run's :class:`ReplayRatio` from the compiled config: ``system_config.replay_ratio``
    (default ``update_per_collect / (n_sample x unroll_len)``, the serial loop's), ``learn_start``
    (default: ``random_collect_size``, and at least one batch of ``batch_size x unroll_len`` env
    steps, where the serial run's first gradient step falls) and ``replay_tolerance``. Train calls
    take ``update_per_collect x collector_num`` steps (one collect's worth per collector; a fixed
    size, so the next call's batches can be drawn while a call trains). An on-policy policy has no
    replay: it trains once on each fresh unroll (its ratio is that), so these settings are refused."""
    learn = cfg.policy.learn
    if cfg.policy.on_policy:
        for key in ("replay_ratio", "learn_start", "replay_tolerance"):
            if sys_cfg.get(key) is not None:
                raise ConfigError(f"system_config.{key}={sys_cfg.get(key)}: policy '{cfg.policy.type}' is on-policy and "
                                  "trains once on each fresh unroll (no replay); valid choices: None")
    per_collect = 1 if cfg.policy.on_policy else max(1, int(learn.update_per_collect))
    unroll = int((cfg.policy.get("collect") or {}).get("unroll_len", 1) or 1)
    steps = collect_steps_of(cfg)
    ratio = sys_cfg.get("replay_ratio")
    if ratio is None:
        if steps is None:
            raise ConfigError("system_config.replay_ratio=None cannot be derived: policy.collect.n_sample is not set "
                              "(an episode collector); valid choices: system_config.replay_ratio=<gradient steps per env step>")
        ratio = per_collect / steps
    learn_start = sys_cfg.get("learn_start")
    if learn_start is None:
        learn_start = max(int(cfg.policy.random_collect_size or 0), int(learn.batch_size) * unroll)
    collectors = int(sys_cfg.collector_num)
    max_call = per_collect * collectors
    nominal = float(steps if steps is not None else cfg.env.collector_env_num)
    tolerance = sys_cfg.get("replay_tolerance")
    if tolerance is None:
        tolerance = default_tolerance(float(ratio), collectors, nominal, max_call)
    return ReplayRatio(float(ratio), int(learn_start), int(tolerance), nominal, max_call, max_call)
