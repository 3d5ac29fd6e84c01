"""``Player``: one member of a league -- the learning main player, a frozen snapshot of it, or a
fixed scripted opponent.

- ``'main'``: the policy being trained (its weights live in the policy, not here);
- ``'exploiter'``: the main exploiter, a second learner that plays only the main player (its
  weights live in its own policy; AlphaStar's / DI-engine's ``MainExploiter``);
- ``'historical'``: a frozen copy of the main player's (or the exploiter's) weights at a train iteration (its
  ``weights``: an eval-only ``state_dict``, from ``stride.league.snapshot(policy)``), which never
  changes again; ``parent_id`` names the player it was taken from;
- ``'fixed'``: a scripted opponent registered in ``stride.envs.opponents`` (``'random'``,
  ``'win_block'``), named by its ``player_id``.

DI-engine splits these into class trees (``ActivePlayer``/``HistoricalPlayer``/``MainPlayer``...)
that each carry a checkpoint *path* the league copies files to; here a player is plain data whose
weights are tensors, so the league's ``state_dict`` (and the run's checkpoint) holds every
snapshot and a resumed league is the same league.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional

from ..utils.narrow import as_int, as_mapping

PLAYER_KINDS = ("main", "exploiter", "historical", "fixed")


@dataclass
class Player:
    """A league member (see the module docstring)."""

    player_id: str
    kind: str
    parent_id: Optional[str] = None
    #: the parent's train iteration when the snapshot was taken (0 for the others)
    train_iter: int = 0
    #: a historical player's frozen weights (an eval-only state_dict); None for the others
    weights: Optional[Dict[str, object]] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in PLAYER_KINDS:
            raise ValueError(f"unknown player kind {self.kind!r}; valid choices: {', '.join(PLAYER_KINDS)}")
        if (self.kind == "historical") != (self.weights is not None):
            raise ValueError(f"player {self.player_id!r}: a historical player (and only it) holds frozen weights")

    def state_dict(self) -> Dict[str, object]:
        return {"player_id": self.player_id, "kind": self.kind, "parent_id": self.parent_id,
                "train_iter": self.train_iter, "weights": self.weights}

    @classmethod
    def from_state_dict(cls, state: Mapping[str, object]) -> "Player":
        weights = state.get("weights")
        return cls(str(state["player_id"]), str(state["kind"]),
                   None if state.get("parent_id") is None else str(state["parent_id"]),
                   as_int(state.get("train_iter", 0), "player 'train_iter'"),
                   None if weights is None else dict(as_mapping(weights, "player 'weights'")))
