"""``PolicyConfig``: the typed config every policy's extends, section by section.

A policy declares its config as a :class:`~stride.config.view.ConfigView` tree: ``PolicyConfig``
with ``learn`` / ``collect`` / ``eval`` / ``other`` subsections, which an algorithm extends by
subclassing each (``DQNLearnConfig(PolicyLearnConfig)``), so ``self._typed.learn.batch_size`` is an
``int`` to mypy where ``self._cfg.learn.batch_size`` is ``Any``. The same classes are the
declaration ``compile_config`` merges a user's config over (``Policy.declared_config()``; a
subclass's fields update its parents' as the nested dicts did). A :func:`~stride.config.view.fixed`
field is what the base code reads for a key an algorithm does not declare (``nstep`` is 1 for PPO,
which has no n-step returns); an algorithm that declares the key makes it a setting.
DI-engine's policies read an untyped ``EasyDict`` and re-state defaults where they read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional, Union

from ..config.setting import REQUIRED
from ..config.view import ConfigView, declared, fixed, setting, subsection

#: a :class:`~stride.rl_utils.schedule.Scheduled` key's value: a number, or a schedule dict
ScheduleValue = Union[float, Mapping[str, object]]
#: ``action_range``: ``[low, high]``, scalars or per-dimension lists (None: the identity)
ActionRange = Optional[List[Union[float, List[float]]]]


@dataclass(frozen=True)
class PolicyLearnConfig(ConfigView):
    """``policy.learn``: the learn mode's settings."""

    # (bool) data-parallel learner replicas, one process each (torchrun, or a pipeline that
    # starts them): weights broadcast from rank 0 at start, gradients averaged every step.
    multi_gpu: bool = False
    # samples per learn step (None: one collect's samples, whole), where the algorithm declares none
    batch_size: Optional[int] = fixed(None)


@dataclass(frozen=True)
class PolicyCollectConfig(ConfigView):
    """``policy.collect``: the collect mode's settings (the collector's own are added by compile_config)."""

    # train samples / episodes per collect, and transitions per train sample, where the algorithm declares none
    n_sample: Optional[int] = fixed(None)
    n_episode: Optional[int] = fixed(None)
    unroll_len: int = fixed(1)


@dataclass(frozen=True)
class PolicyEvalConfig(ConfigView):
    """``policy.eval``: nothing of the policy's own (the evaluator's are added by compile_config)."""


@dataclass(frozen=True)
class PolicyOtherConfig(ConfigView):
    """``policy.other``: exploration and the replay buffer's presets, per algorithm."""


@dataclass(frozen=True)
class PolicyConfig(ConfigView):
    """``policy``: what every algorithm has; an algorithm subclasses it (and its sections)."""

    # (str) registered policy name.
    type: str = declared(REQUIRED)
    # (bool) train on CUDA when available (falls back to CPU); a policy built without its learn mode (a
    # -m parallel collector, an evaluator) acts on the CPU from the weights the learner publishes.
    cuda: bool = False
    # (bool) on-policy algorithms train on fresh data only and use no replay buffer.
    on_policy: bool = declared(REQUIRED)
    # (bool) prioritized replay: the learner returns 'priority' per sample.
    priority: bool = False
    # (bool) weight the loss by importance-sampling weights (needs priority=True).
    priority_IS_weight: bool = False
    # (int) transitions collected with uniformly random actions before training starts.
    random_collect_size: int = setting(0, "[0, inf)")
    # (bool) normalise observations with running mean/var (stride.model.common.normalize.RunningNorm):
    # updated by collect forwards only, applied to collect, eval and learn; saved in the model's state_dict.
    obs_norm: bool = False
    # (float) normalised observations are clipped to [-obs_norm_clip, obs_norm_clip].
    obs_norm_clip: float = setting(10.0, "(0, inf)")
    # model keyword arguments (validated against the model class's signature).
    model: Mapping[str, object] = declared({})
    learn: PolicyLearnConfig = subsection(PolicyLearnConfig)
    collect: PolicyCollectConfig = subsection(PolicyCollectConfig)
    eval: PolicyEvalConfig = subsection(PolicyEvalConfig)
    other: PolicyOtherConfig = subsection(PolicyOtherConfig)
    # where the algorithm declares none: 1-step samples, no discount to apply to them, no action bounds
    nstep: int = fixed(1)
    discount_factor: float = fixed(1.0)
    action_range: ActionRange = fixed(None)


@dataclass(frozen=True)
class TransitionCollectConfig(PolicyCollectConfig):
    """``policy.collect`` of the algorithms that learn from single transitions (DQN, DDPG / TD3, SAC)."""

    # Give exactly one of n_sample (transitions per collect) / n_episode.
    n_sample: Optional[int] = setting(None, "[1, inf)", kind=int)
    n_episode: Optional[int] = setting(None, "[1, inf)", kind=int)
    unroll_len: int = setting(1, "[1, inf)")


@dataclass(frozen=True)
class OffPolicyACLearnConfig(PolicyLearnConfig):
    """``policy.learn`` of the off-policy actor-critics (DDPG / TD3, SAC): what they share."""

    # (int) gradient steps after each collect.
    update_per_collect: int = setting(1, "[1, inf)")
    # (int) samples per gradient step.
    batch_size: int = setting(256, "[1, inf)")
    # (float) Polyak rate of the target networks.
    target_theta: float = setting(0.005, "(0, 1]")
    # (str) 'mse' or 'huber'.
    loss_type: str = setting("mse", ("mse", "huber"))
    # (float|None) clip each network's gradient norm to this value.
    grad_clip_norm: Optional[float] = setting(None, "(0, inf)")


@dataclass(frozen=True)
class OffPolicyACOtherConfig(PolicyOtherConfig):
    """``policy.other`` of the off-policy actor-critics: a large replay."""

    replay_buffer: Mapping[str, object] = declared(dict(replay_buffer_size=1_000_000))


@dataclass(frozen=True)
class OffPolicyACConfig(PolicyConfig):
    """``policy`` of the off-policy actor-critics on a continuous (Box) action space, DDPG / TD3 and
    SAC: an algorithm's view subclasses it, adding its own keys."""

    on_policy: bool = False
    # (float) reward discount gamma.
    discount_factor: float = setting(0.99, "(0, 1]")
    # (int) steps summed in the TD target.
    nstep: int = setting(1, "[1, inf)")
    # ([low, high]|None) the env's action bounds: actions are learnt in [-1, 1] and handed out
    # mapped onto them (None: the entry fills them from its env's Box action space).
    action_range: ActionRange = None
    learn: OffPolicyACLearnConfig = subsection(OffPolicyACLearnConfig)
    collect: TransitionCollectConfig = subsection(TransitionCollectConfig)
    other: OffPolicyACOtherConfig = subsection(OffPolicyACOtherConfig)


@dataclass(frozen=True)
class DemoMixConfig(ConfigView):
    """``policy.collect`` keys of the algorithms that mix demonstrations into every batch (SQIL,
    R2D3): an algorithm's collect view subclasses it beside its own."""

    # (str) the expert's demonstrations: a Minari dataset folder or local id (stride -m collect_demo).
    data_path: str = declared(REQUIRED)
    # (float) share of every batch taken from the demonstrations.
    demo_fraction: float = setting(0.5, "(0, 1)")
