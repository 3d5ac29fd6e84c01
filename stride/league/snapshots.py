"""A policy's side of the league, over its public API: snapshot, frozen copy, load back.

- :func:`snapshot` ``(policy) -> weights``: the eval state (the model's weights, on the CPU)
  cloned, so later training never changes it -- a frozen league player's weights;
- :func:`frozen` ``(policy, weights) -> EvalMode``: a separate eval-only policy of the same class
  and config on a copy of the model, acting with ``weights`` (the learning policy is untouched);
- :func:`load_snapshot` ``(policy, weights)``: back -- the learn state's model takes a frozen
  player's weights (optimizer and target networks keep theirs, as DI-engine's ``mutate`` resets
  the model only).

DI-engine gives every policy a ``league_mode`` of its own; here the three are one adapter over
``policy.model``, ``policy.cfg`` and ``policy.eval_mode``, so no algorithm carries league code.
:func:`league_mode` bundles them as the seeds' ``league_mode`` (:class:`LeagueMode`).
"""

from __future__ import annotations

import copy
from typing import Callable, Dict, Mapping, NamedTuple

from ..policy.base_policy import EvalMode, Policy


def snapshot(policy: Policy) -> Dict[str, object]:
    """``policy``'s eval state (its model's weights) cloned: a frozen player's weights."""
    state = policy.eval_mode.state_dict()
    return {k: ({n: t.detach().clone() for n, t in v.items()} if isinstance(v, Mapping) else copy.deepcopy(v))
            for k, v in state.items()}


def frozen(policy: Policy, weights: Mapping[str, object]) -> EvalMode:
    """An eval-only policy of ``policy``'s class and config on a copy of its model, holding ``weights``."""
    model = copy.deepcopy(policy.model)
    for p in model.parameters():
        p.requires_grad_(False)
    cfg = copy.deepcopy(policy.cfg)
    if "learn" in cfg:
        cfg.learn.multi_gpu = False  # a frozen player joins no process group
    player = type(policy)(cfg, model=model, enable_field=["eval"])
    player.eval_mode.load_state_dict(dict(weights))
    return player.eval_mode


def load_snapshot(policy: Policy, weights: Mapping[str, object]) -> None:
    """``policy``'s model (shared by its learn state) takes a frozen player's weights."""
    policy.eval_mode.load_state_dict(dict(weights))


class LeagueMode(NamedTuple):
    """The seeds' ``policy.league_mode``: :func:`snapshot`, :func:`frozen` and :func:`load_snapshot`
    bound to one policy."""

    snapshot: Callable[[], Dict[str, object]]
    frozen: Callable[[Mapping[str, object]], EvalMode]
    load_snapshot: Callable[[Mapping[str, object]], None]


def league_mode(policy: Policy) -> LeagueMode:
    """``policy``'s :class:`LeagueMode` (what ``policy.league_mode`` gave, now deprecated)."""
    return LeagueMode(lambda: snapshot(policy), lambda weights: frozen(policy, weights),
                      lambda weights: load_snapshot(policy, weights))
