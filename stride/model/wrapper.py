"""Model wrappers: one shared model, different behaviour per policy mode.

``model_wrap(model, wrapper_name, **kwargs)`` stacks a wrapper on ``model`` without copying it:
attribute reads (``parameters()``, ``state_dict()``, ``train()``...) fall through to the model.
Better than DI-engine on purpose: ``eps_greedy_sample`` flips one coin per sample (DI flips one
per batch, so a whole batch explores or exploits together); the momentum ``target`` also averages
buffers (DI copies only parameters, leaving e.g. BatchNorm statistics stale).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import torch
from torch import nn

from ..utils.registry import WRAPPER_REGISTRY


class IModelWrapper:
    """Base wrapper: forwards calls and attributes to the wrapped model."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def __getattr__(self, key: str) -> Any:
        return getattr(self.__dict__["_model"], key)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._model.forward(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def reset(self, data_id: Optional[list] = None, **kwargs: Any) -> None:
        if hasattr(self._model, "reset"):
            self._model.reset(data_id=data_id, **kwargs)

    def unwrapped(self) -> nn.Module:
        m = self._model
        while isinstance(m, IModelWrapper):
            m = m._model
        return m


@WRAPPER_REGISTRY.register("base")
class BaseModelWrapper(IModelWrapper):
    """Identity."""


@WRAPPER_REGISTRY.register("argmax_sample")
class ArgmaxSampleWrapper(IModelWrapper):
    """Adds ``action = argmax(logit)`` (masked by ``action_mask`` when the output has one)."""

    def forward(self, *args: Any, **kwargs: Any) -> Dict[str, torch.Tensor]:
        out = self._model.forward(*args, **kwargs)
        logit = out["logit"]
        if "action_mask" in out:
            logit = logit.masked_fill(~out["action_mask"].bool(), float("-inf"))
        out["action"] = logit.argmax(dim=-1)
        return out


@WRAPPER_REGISTRY.register("multinomial_sample")
class MultinomialSampleWrapper(IModelWrapper):
    """Adds ``action`` sampled from ``softmax(logit / alpha)``."""

    def forward(self, *args: Any, alpha: float = 1.0, **kwargs: Any) -> Dict[str, torch.Tensor]:
        out = self._model.forward(*args, **kwargs)
        logit = out["logit"] / alpha
        if "action_mask" in out:
            logit = logit.masked_fill(~out["action_mask"].bool(), float("-inf"))
        out["action"] = torch.distributions.Categorical(logits=logit).sample()
        return out


@WRAPPER_REGISTRY.register("eps_greedy_sample")
class EpsGreedySampleWrapper(IModelWrapper):
    """Adds ``action``: per sample, a uniform random action with probability ``eps``, else argmax."""

    def forward(self, *args: Any, eps: float, **kwargs: Any) -> Dict[str, torch.Tensor]:
        out = self._model.forward(*args, **kwargs)
        logit = out["logit"]
        greedy = logit.argmax(dim=-1)
        if eps <= 0:
            out["action"] = greedy
            return out
        batch, n = logit.shape[0], logit.shape[-1]
        explore = torch.rand(batch, device=logit.device) < eps
        random = torch.randint(0, n, (batch,), device=logit.device)
        out["action"] = torch.where(explore, random, greedy)
        return out


@WRAPPER_REGISTRY.register("hidden_state")
class HiddenStateWrapper(IModelWrapper):
    """Keeps one recurrent state per env id: ``forward(data, data_id=[...])`` injects and stores it."""

    def __init__(self, model: Any, state_num: int, save_prev_state: bool = False, init_fn: Callable[[], Any] = lambda: None) -> None:
        super().__init__(model)
        self._state_num = state_num
        self._save_prev_state = save_prev_state
        self._init_fn = init_fn
        self._state: Dict[int, Any] = {i: init_fn() for i in range(state_num)}

    def forward(self, data: Dict[str, Any], data_id: Optional[list] = None, **kwargs: Any) -> Dict[str, Any]:
        ids = list(range(self._state_num)) if data_id is None else list(data_id)
        prev = [self._state[i] for i in ids]
        data = dict(data)
        data["prev_state"] = prev
        out = self._model.forward(data, **kwargs)
        for i, s in zip(ids, out["next_state"]):
            self._state[i] = s
        if self._save_prev_state:
            out["prev_state"] = prev
        return out

    def reset(self, data_id: Optional[list] = None, state: Optional[list] = None, **kwargs: Any) -> None:
        ids = list(range(self._state_num)) if data_id is None else list(data_id)
        for k, i in enumerate(ids):
            self._state[i] = state[k] if state is not None else self._init_fn()
        super().reset(data_id=data_id, **kwargs)


@WRAPPER_REGISTRY.register("target")
class TargetNetworkWrapper(IModelWrapper):
    """A target network: ``update(state_dict)`` copies every ``freq`` calls (``assign``) or averages
    with rate ``theta`` every call (``momentum``). Wrap a *copy* of the online model."""

    def __init__(self, model: nn.Module, update_type: str, update_kwargs: Dict[str, Any]) -> None:
        super().__init__(model)
        if update_type == "assign":
            self._freq = int(update_kwargs["freq"])
            if self._freq < 1:
                raise ValueError(f"target update freq must be >= 1, got {self._freq}")
        elif update_type == "momentum":
            self._theta = float(update_kwargs["theta"])
            if not 0 < self._theta <= 1:
                raise ValueError(f"target momentum theta must be in (0, 1], got {self._theta}")
        else:
            raise ValueError(f"unknown target update_type '{update_type}'; valid choices: assign, momentum")
        self._update_type = update_type
        self._update_count = 0
        self._pairs: Optional[list] = None
        self._pairs_src: Optional[nn.Module] = None

    def update(self, state_dict: Dict[str, torch.Tensor] | nn.Module, direct: bool = False) -> None:
        """Feed the online network's weights (a state dict, or the module itself, which is cheaper:
        its state dict is only built when an ``assign`` copy is due)."""
        model = self.unwrapped()
        if direct:
            model.load_state_dict(state_dict.state_dict() if isinstance(state_dict, nn.Module) else state_dict)
            self._update_count = 0
            return
        self._update_count += 1
        if self._update_type == "assign":
            if self._update_count % self._freq == 0:
                sd = state_dict.state_dict() if isinstance(state_dict, nn.Module) else state_dict
                model.load_state_dict(sd, strict=True)
            return
        if isinstance(state_dict, nn.Module):
            if self._pairs is None or self._pairs_src is not state_dict:
                mine, theirs = model.state_dict(keep_vars=True), state_dict.state_dict(keep_vars=True)
                self._pairs = [(mine[k].data, v.data) for k, v in theirs.items()]
                self._pairs_src = state_dict
            pairs = self._pairs
        else:
            mine = model.state_dict()
            pairs = [(mine[k], v) for k, v in state_dict.items()]
        with torch.no_grad():
            floats = [(a, b) for a, b in pairs if a.is_floating_point()]
            if floats:
                torch._foreach_lerp_([a for a, _ in floats], [b for _, b in floats], self._theta)
            for a, b in pairs:
                if not a.is_floating_point():
                    a.copy_(b)

    def reset(self, target_update_count: Optional[int] = None, **kwargs: Any) -> None:
        self._update_count = 0 if target_update_count is None else int(target_update_count)

    @property
    def update_count(self) -> int:
        return self._update_count


def model_wrap(model: Any, wrapper_name: Optional[str] = None, **kwargs: Any) -> IModelWrapper:
    """Wrap ``model`` with the wrapper registered as ``wrapper_name`` (sharing its parameters)."""
    if wrapper_name is None:
        wrapper_name = "base"
    cls = WRAPPER_REGISTRY.get(wrapper_name)
    return cls(model, **kwargs)
