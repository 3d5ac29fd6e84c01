"""R2D3 (Paine et al., 2019, "Making Efficient Use of Demonstrations to Solve Hard Exploration
Problems"): R2D2 (:mod:`stride.policy.r2d2`) whose every batch mixes a fixed share of
demonstration sequences, drawn from their own prioritised replay, into the agent's.

- Data: the config names a Minari dataset at ``policy.collect.data_path`` (``stride -m
  collect_demo``); the serial pipeline replays it once through this policy's
  ``process_transition`` / ``get_train_sample`` -- the same ``SequenceAdder`` path as the agent's
  own steps, so demonstration sequences have the same length, overlap, burn-in, padding and n-step
  rows -- into a second buffer beside the agent's
  (:class:`~stride.data.buffer.demo_mix.DemoMixBuffer`, :mod:`stride.entry.demonstrations`).
- Mix: every batch of ``B`` sequences holds exactly ``round(pho * B)`` demonstration sequences
  (``policy.collect.demo_fraction``, the paper's demo ratio ``pho``: 1/256 on its Atari-like
  tasks; smaller tasks with smaller batches need a larger one) and the agent's for the rest.
- Priorities: both stores are prioritised, each by its own table, with R2D2's mixed max/mean
  sequence priority; each sequence's new priority goes back to the store it came from.
- Recurrent state of a demonstration sequence: the dataset holds no state (nor should it: the
  expert's network is not this one), so a demonstration step is stored with this model's initial
  (zero) state. The first sequence of a demonstration episode starts from exactly that state (and
  learns its burn-in rows, as R2D2 does for an agent sequence that starts an episode); a later one
  starts from zeros and relies on its burn-in rows to warm the state up (R2D2's "zero start
  state" with burn-in). The agent's sequences keep their stored states as in R2D2.
- Loss: R2D2's, unchanged -- n-step double-Q TD with value rescaling, IS-weighted -- on both kinds
  of sequence alike. Acting and evaluation are R2D2's.

Configs: ``mountaincar_r2d3`` (sparse reward, a scripted expert's ten episodes; against
``mountaincar_r2d2`` the median env steps to a confirmed -150 are 24,024 vs 28,152 over seeds 0-2)
and ``cartpole_pomdp_r2d3`` (dense reward, an R2D2 expert's: equal medians) --
``benchmarks/r2d3/README.md``.

How it differs from DI-engine's ``r2d3`` on purpose: DI adds DQfD's losses to the TD loss -- a
supervised large-margin loss on the expert's actions (``lambda2`` 1.0, margin 0.8), a one-step TD
term and L2 regularisation -- and an optional pre-training phase. The R2D3 paper has none of them:
its only use of the demonstrations is the demo ratio of the replay. Stride follows the paper: TD
alone lets the values of the agent's own data overrule a demonstrator where it is suboptimal, where
a margin loss keeps pulling the greedy action to the expert's; DI's own R2D3 notes find
pre-training and L2 of "little effect". DI also draws the number of expert samples per batch as a
Binomial(B, pho) (here a fixed ``round(pho * B)``), rolls a second expert collector online inside a
copy of the serial loop (here: a dataset, the serial loop, one buffer interface); its expert
collector (``r2d2_collect_traj``) stores ``prev_state=None``, so its expert sequences start from the
zero state too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict

import numpy as np
import torch

from ..config.view import subsection
from ..utils.registry import POLICY_REGISTRY
from .r2d2 import R2D2CollectConfig, R2D2Config, R2D2Policy
from .views import DemoMixConfig


@dataclass(frozen=True)
class R2D3CollectConfig(R2D2CollectConfig, DemoMixConfig):
    # (float) pho, the demo ratio: round(pho * batch_size) demonstration sequences per batch.
    demo_fraction: float = 0.25


@dataclass(frozen=True)
class R2D3Config(R2D2Config):
    type: str = "r2d3"
    collect: R2D3CollectConfig = subsection(R2D3CollectConfig)


@POLICY_REGISTRY.register("r2d3")
class R2D3Policy(R2D2Policy):
    """R2D2 on batches of ``round(pho * B)`` prioritised demonstration sequences + the agent's own."""

    config_view = R2D3Config
    _typed: R2D3Config

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        super()._init_collect()
        initial: Callable[[int], torch.Tensor] = getattr(self._model, "initial_state")
        self._demo_state: np.ndarray = initial(1)[0].detach().cpu().numpy()

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        if not timestep.info.get("demo"):
            return super()._process_transition(obs, policy_output, timestep)
        # a demonstration step: replayed in whole episodes, so the first one starts its episode
        # (get_train_sample reads only the first step's flag) and every step gets the initial state
        output = dict(policy_output, prev_state=self._demo_state, start=True)
        return super()._process_transition(obs, output, timestep)
