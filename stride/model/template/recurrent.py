"""Recurrent Q-network: encoder -> LSTM (or GRU) -> (dueling) Q head, for R2D2 (Kapturowski et al., 2019).

The recurrent state travels as **one flat tensor per sample**, ``(B, state_size)`` (an LSTM's
``h`` and ``c`` of every layer side by side), so a per-env store, a replay item and a batch hold it
like any other column. Better than the peers on purpose: DI-engine passes lists of per-sample
``{'h', 'c'}`` dicts that every caller restacks, and Tianshou's recurrent nets take a dict of
batch-first states that the replay buffer cannot store as one column.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

import torch
from torch import nn

from ...utils.errors import ConfigError
from ...utils.registry import MODEL_REGISTRY
from ..common import ENCODERS, DiscreteHead, DuelingHead, build_encoder

RNN_TYPES = ("lstm", "gru")


@MODEL_REGISTRY.register("drqn")
class DRQN(nn.Module):
    """``forward(obs, state=None) -> {'logit', 'next_state'}`` over one step or a sequence.

    ``obs`` is one step ``(B, *obs_shape)`` (logit ``(B, A)``) or a time-major sequence
    ``(T, B, *obs_shape)`` (logit ``(T, B, A)``); ``state`` is ``(B, state_size)`` (None: the
    initial state, zeros) and ``next_state`` the state after the last step. The names follow
    DI-engine's ``DRQN`` (its R2D2 model)."""

    #: valid values of the keyword arguments (checked by ``compile_config``)
    VALID = dict(encoder_hidden_size_list="[1, inf)", head_layer_num="[0, inf)", encoder=ENCODERS, rnn_type=RNN_TYPES,
                 hidden_size="[1, inf)", rnn_layer_num="[1, inf)")

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int,
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        hidden_size: int = 64,
        rnn_type: str = "lstm",
        rnn_layer_num: int = 1,
        dueling: bool = True,
        head_layer_num: int = 1,
        activation: str = "relu",
        encoder: Optional[str] = None,
    ) -> None:
        super().__init__()
        if not isinstance(action_shape, int) or action_shape < 1:
            raise ConfigError(f"DRQN needs a positive int action_shape, got {action_shape!r}")
        if rnn_type not in RNN_TYPES:
            raise ConfigError(f"unknown rnn_type '{rnn_type}'; valid choices: {', '.join(RNN_TYPES)}")
        self.obs_ndim = 1 if isinstance(obs_shape, int) else len(obs_shape)
        self.encoder = build_encoder(obs_shape, encoder, encoder_hidden_size_list, activation)
        rnn = nn.LSTM if rnn_type == "lstm" else nn.GRU
        self.rnn = rnn(self.encoder.output_size, hidden_size, num_layers=rnn_layer_num)
        self._parts = (2 if rnn_type == "lstm" else 1) * rnn_layer_num  # (layers of h) [+ layers of c]
        self.hidden_size = hidden_size
        head = DuelingHead if dueling else DiscreteHead
        self.head = head(hidden_size, action_shape, head_layer_num, activation)

    @property
    def state_size(self) -> int:
        """Length of one sample's flat recurrent state."""
        return self._parts * self.hidden_size

    def initial_state(self, batch_size: int) -> torch.Tensor:
        """The state at an episode start: zeros ``(batch_size, state_size)`` on the model's device."""
        return torch.zeros(batch_size, self.state_size, device=next(self.head.parameters()).device)

    def forward(self, obs: torch.Tensor, state: Optional[torch.Tensor] = None) -> Dict[str, torch.Tensor]:
        sequence = obs.dim() == self.obs_ndim + 2
        x = obs if sequence else obs.unsqueeze(0)
        t, b = x.shape[0], x.shape[1]
        feat = self.encoder(x.reshape(t * b, *x.shape[2:])).reshape(t, b, -1)
        if feat.is_cuda:  # a deep-copied (target) RNN's weights are no longer one cuDNN chunk: compact once
            self.rnn.flatten_parameters()
        out, nxt = self.rnn(feat, self._unpack(state, b))
        logit = self.head(out)
        return {"logit": logit if sequence else logit.squeeze(0), "next_state": self._pack(nxt)}

    # ---- flat state <-> the RNN's (layers, B, H) tensors ---------------------------------------
    def _unpack(self, state: Optional[torch.Tensor], batch: int) -> torch.Tensor | Tuple[torch.Tensor, torch.Tensor]:
        if state is None:
            state = self.initial_state(batch)
        if state.shape != (batch, self.state_size):
            raise ValueError(f"DRQN state must be (batch={batch}, state_size={self.state_size}), got {tuple(state.shape)}")
        parts = state.reshape(batch, self._parts, self.hidden_size).transpose(0, 1).contiguous()
        if isinstance(self.rnn, nn.LSTM):
            h, c = parts.chunk(2, dim=0)
            return h.contiguous(), c.contiguous()
        return parts

    def _pack(self, nxt: torch.Tensor | Tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        parts = torch.cat(nxt, dim=0) if isinstance(nxt, tuple) else nxt
        return parts.transpose(0, 1).reshape(parts.shape[1], -1)
