"""Model wrappers: one shared model, different behaviour per policy mode.

``model_wrap(model, wrapper_name, **kwargs)`` stacks a wrapper on ``model`` without copying it:
attribute reads (``parameters()``, ``state_dict()``, ``train()``...) fall through to the model.
Better than DI-engine on purpose: ``eps_greedy_sample`` flips one coin per sample (DI flips one
per batch, so a whole batch explores or exploits together); the momentum ``target`` also averages
buffers (DI copies only parameters, leaving e.g. BatchNorm statistics stale); the tanh-squashed
``reparam_sample`` corrects its log-prob with a stable ``log(1 - tanh(u)**2)`` (no epsilon), and
``action_noise`` adds noise out of place.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..utils.registry import WRAPPER_REGISTRY
from ..utils.errors import ConfigError


#: a model, or a stack of wrappers around one
Model = Union[nn.Module, "IModelWrapper"]


class IModelWrapper:
    """Base wrapper: forwards calls and attributes to the wrapped model."""

    def __init__(self, model: Model) -> None:
        self._model = model

    def __getattr__(self, key: str) -> Any:
        return getattr(self.__dict__["_model"], key)

    # ``Any`` keyword arguments: each wrapper adds its own (``eps=``, ``alpha=``, ``sigma=``...)
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped model's forward."""
        return self._model.forward(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def reset(self, data_id: Optional[List[int]] = None, **kwargs: Any) -> None:
        """Reset per-env state (here: the wrapped model's, where it has a ``reset``)."""
        reset = getattr(self._model, "reset", None)
        if reset is not None:
            reset(data_id=data_id, **kwargs)

    @property
    def wrapped_model(self) -> Model:
        """The model (or wrapper) this wrapper wraps, one level down."""
        return self._model

    def unwrapped(self) -> nn.Module:
        """The model under every wrapper."""
        m = self._model
        while isinstance(m, IModelWrapper):
            m = m.wrapped_model
        return m


@WRAPPER_REGISTRY.register("base")
class BaseModelWrapper(IModelWrapper):
    """Identity."""


@WRAPPER_REGISTRY.register("argmax_sample")
class ArgmaxSampleWrapper(IModelWrapper):
    """Adds ``action = argmax(logit)`` (masked by ``action_mask`` when the output has one)."""

    def forward(self, *args: object, **kwargs: object) -> Dict[str, torch.Tensor]:
        out: Dict[str, torch.Tensor] = self._model.forward(*args, **kwargs)
        logit = out["logit"]
        if "action_mask" in out:
            logit = logit.masked_fill(~out["action_mask"].bool(), float("-inf"))
        out["action"] = logit.argmax(dim=-1)
        return out


@WRAPPER_REGISTRY.register("multinomial_sample")
class MultinomialSampleWrapper(IModelWrapper):
    """Adds ``action`` sampled from ``softmax(logit / alpha)``."""

    def forward(self, *args: object, alpha: float = 1.0, **kwargs: object) -> Dict[str, torch.Tensor]:
        out: Dict[str, torch.Tensor] = self._model.forward(*args, **kwargs)
        logit = out["logit"] / alpha
        if "action_mask" in out:
            logit = logit.masked_fill(~out["action_mask"].bool(), float("-inf"))
        out["action"] = torch.distributions.Categorical(logits=logit).sample()  # type: ignore[no-untyped-call]
        return out


@WRAPPER_REGISTRY.register("eps_greedy_sample")
class EpsGreedySampleWrapper(IModelWrapper):
    """Adds ``action``: per sample, a uniform random action with probability ``eps``, else argmax
    (with an ``action_mask`` in the output: a uniform random legal action, else the legal argmax).

    One uniform draw per sample decides both: ``u < eps`` explores, and then ``u / eps`` is itself
    uniform, so ``floor(u / eps * n)`` is the random action. On CPU the arithmetic is done in NumPy
    on torch's draws: this runs once per env step on a handful of envs, where each tensor op costs
    more than the arithmetic (NumPy: half the cost, same actions).
    """

    def forward(self, *args: object, eps: float, **kwargs: object) -> Dict[str, torch.Tensor]:
        out: Dict[str, torch.Tensor] = self._model.forward(*args, **kwargs)
        logit = out["logit"]
        if "action_mask" in out:
            out["action"] = self._masked(logit, out["action_mask"].bool(), eps)
            return out
        if eps > 0 and logit.device.type == "cpu":
            # NumPy's argmax picks the first maximum (and first NaN) as torch's does
            greedy = logit.detach().numpy().argmax(-1)
            n = logit.shape[-1]
            # s = u * n / eps < n  <=>  u < eps (a product rounded up to n just stays greedy)
            s = torch.rand(*greedy.shape, dtype=torch.float64).numpy() * (n / eps)  # a tuple of ints: cheaper than a Size
            explore = s < n
            if eps < 1e-9:  # s may exceed the int64 range where it is not used: cast only in range
                s = np.minimum(s, n - 1)
            out["action"] = torch.from_numpy(np.where(explore, s.astype(np.int64), greedy))
            return out
        greedy = logit.argmax(dim=-1)
        if eps <= 0:
            out["action"] = greedy
            return out
        n = logit.shape[-1]
        u = torch.rand(greedy.shape, device=logit.device, dtype=torch.float64)
        random = (u / eps * n).long().clamp_(max=n - 1)
        out["action"] = torch.where(u < eps, random, greedy)
        return out

    @staticmethod
    def _masked(logit: torch.Tensor, mask: torch.Tensor, eps: float) -> torch.Tensor:
        """The same draw over the legal actions only: the greedy one is the masked argmax; the
        random one is legal action ``floor(u / eps * n_legal)`` (in index order), uniform among them."""
        greedy = logit.masked_fill(~mask, float("-inf")).argmax(dim=-1)
        if eps <= 0:
            return greedy
        u = torch.rand(greedy.shape, device=logit.device, dtype=torch.float64)
        n_legal = mask.sum(-1)
        k = torch.minimum((u / eps * n_legal).long(), n_legal - 1)
        random = (mask.long().cumsum(-1) > k.unsqueeze(-1)).long().argmax(dim=-1)  # the first index past k legal ones
        return torch.where(u < eps, random, greedy)


@WRAPPER_REGISTRY.register("hidden_state")
class HiddenStateWrapper(IModelWrapper):
    """Keeps one recurrent state per env id across ``forward`` calls (R2D2's collect and eval modes).

    The model takes ``forward(obs, state=...)`` and returns ``next_state``, states being flat
    ``(batch, state_size)`` tensors, and has ``initial_state(n)`` (``stride.model.DRQN``).
    ``forward(obs, data_id=[...])``: row ``i`` of ``obs`` is env ``data_id[i]``'s (default: all
    ``state_num`` envs in order); that env's state goes in and its ``next_state`` is kept. An env id
    past ``state_num`` grows the store (a new env starts from the initial state).
    ``reset(data_id)`` puts those envs back to the initial state -- the collector and evaluator call
    it exactly when an env's episode ends, so envs finishing at different times never share or leak
    state. With ``save_prev_state`` the output carries ``prev_state``, the states the step started
    from (what a sequence stores at its start, for burn-in).

    Better than DI-engine on purpose: all envs' states live in one ``(state_num, state_size)``
    tensor, gathered and written back by index (DI keeps a list of per-env dicts and restacks it
    every step), and they are replaced out of place, so states made under ``torch.inference_mode``
    can be reset outside it.
    """

    def __init__(self, model: Model, state_num: int, save_prev_state: bool = False) -> None:
        super().__init__(model)
        if isinstance(state_num, bool) or not isinstance(state_num, int) or state_num < 1:
            raise ConfigError(f"hidden_state needs state_num >= 1 (one state per env), got {state_num!r}")
        if not callable(getattr(model, "initial_state", None)):
            raise ConfigError(f"hidden_state needs a model with initial_state(n), {type(model).__name__} has none")
        self._state_num = state_num
        self._save_prev_state = bool(save_prev_state)
        self._state: torch.Tensor = self._initial(state_num)

    def _initial(self, n: int) -> torch.Tensor:
        init: Callable[[int], torch.Tensor] = getattr(self._model, "initial_state")
        return init(n)

    def _index(self, data_id: Optional[Sequence[int]]) -> Optional[torch.Tensor]:
        """``data_id`` as an index tensor (None: every env, in order)."""
        if data_id is None:
            return None
        ids = [int(i) for i in data_id]
        bad = [i for i in ids if i < 0]
        if bad:
            raise ValueError(f"hidden_state: env id(s) {bad} are negative; valid ids: integers >= 0")
        if ids and max(ids) >= self._state_num:
            grow = max(ids) + 1 - self._state_num
            self._state = torch.cat([self._state, self._initial(grow).to(self._state.dtype)])
            self._state_num += grow
        return torch.as_tensor(ids, dtype=torch.long, device=self._state.device)

    def forward(self, obs: object, data_id: Optional[Sequence[int]] = None, **kwargs: object) -> Dict[str, torch.Tensor]:
        idx = self._index(data_id)
        prev = self._state if idx is None else self._state.index_select(0, idx)
        out: Dict[str, torch.Tensor] = self._model.forward(obs, state=prev, **kwargs)
        nxt = out["next_state"].detach()
        self._state = nxt if idx is None else self._state.index_copy(0, idx, nxt)
        if self._save_prev_state:
            out["prev_state"] = prev
        return out

    @property
    def state(self) -> torch.Tensor:
        """Every env's current state, ``(state_num, state_size)`` (read only)."""
        return self._state

    def set_state(self, state: torch.Tensor) -> None:
        """Put back every env's state (a resumed run continues its episodes from where they were)."""
        if state.dim() != 2 or state.shape[1] != self._state.shape[1]:
            raise ValueError(f"hidden_state: a saved state of shape {tuple(state.shape)} does not fit this model's "
                             f"(env, {self._state.shape[1]}) states")
        self._state = state.to(device=self._state.device, dtype=self._state.dtype).clone()
        self._state_num = int(state.shape[0])

    def reset(self, data_id: Optional[List[int]] = None, **kwargs: object) -> None:
        """Back to the initial state for ``data_id`` (None: every env)."""
        idx = self._index(data_id)
        if idx is None:
            self._state = self._initial(self._state_num)
        elif len(idx):
            self._state = self._state.index_copy(0, idx, self._initial(len(idx)).to(self._state.dtype))
        super().reset(data_id=data_id, **kwargs)


@WRAPPER_REGISTRY.register("target")
class TargetNetworkWrapper(IModelWrapper):
    """A target network: ``update(state_dict)`` copies every ``freq`` calls (``assign``) or averages
    with rate ``theta`` every call (``momentum``). Wrap a *copy* of the online model."""

    def __init__(self, model: Model, update_type: str, update_kwargs: Dict[str, float]) -> None:
        super().__init__(model)
        if update_type == "assign":
            self._freq = int(update_kwargs["freq"])
            if self._freq < 1:
                raise ConfigError(f"target update freq must be >= 1, got {self._freq}")
        elif update_type == "momentum":
            self._theta = float(update_kwargs["theta"])
            if not 0 < self._theta <= 1:
                raise ConfigError(f"target momentum theta must be in (0, 1], got {self._theta}")
        else:
            raise ConfigError(f"unknown target update_type '{update_type}'; valid choices: assign, momentum")
        self._update_type = update_type
        self._update_count = 0
        self._pairs: Optional[List[Tuple[torch.Tensor, torch.Tensor]]] = None
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
            for a, b in pairs:
                if a.is_floating_point():
                    a.lerp_(b, self._theta)
                else:
                    a.copy_(b)

    def reset(self, data_id: Optional[List[int]] = None, target_update_count: Optional[int] = None,
              **kwargs: object) -> None:
        """Restart the update count (at ``target_update_count`` when given)."""
        self._update_count = 0 if target_update_count is None else int(target_update_count)

    @property
    def update_count(self) -> int:
        return self._update_count


# ---- continuous actions ----------------------------------------------------------------------
_LOG2 = math.log(2.0)


def tanh_log_det_jacobian(u: torch.Tensor) -> torch.Tensor:
    """``log(1 - tanh(u)**2)`` computed stably as ``2 * (log 2 - u - softplus(-2u))`` (DI-engine adds
    ``1e-6`` inside the log instead, which biases the log-prob where the action saturates)."""
    return 2.0 * (_LOG2 - u - F.softplus(-2.0 * u))


@WRAPPER_REGISTRY.register("reparam_sample")
class ReparamSampleWrapper(IModelWrapper):
    """Adds ``action`` = a reparameterised (differentiable) sample of ``Normal(mu, sigma)`` and its
    ``log_prob`` (summed over action dims). With ``tanh=True`` (SAC) the sample is squashed into
    (-1, 1) and the log-prob includes the change of variables ``- sum log(1 - tanh(u)**2)``."""

    def __init__(self, model: Model, tanh: bool = False) -> None:
        super().__init__(model)
        self._tanh = bool(tanh)

    def forward(self, *args: object, **kwargs: object) -> Dict[str, torch.Tensor]:
        out: Dict[str, torch.Tensor] = self._model.forward(*args, **kwargs)
        mu, sigma = out["mu"], out["sigma"]
        eps = torch.randn_like(mu)
        u = mu + sigma * eps  # ((u - mu) / sigma)**2 == eps**2 exactly, with the same gradients
        log_prob = (-0.5 * eps.pow(2) - sigma.log() - 0.5 * math.log(2 * math.pi)).sum(-1)
        if self._tanh:
            log_prob = log_prob - tanh_log_det_jacobian(u).sum(-1)
            u = torch.tanh(u)
        out["action"], out["log_prob"] = u, log_prob
        return out


@WRAPPER_REGISTRY.register("deterministic_sample")
class DeterministicSampleWrapper(IModelWrapper):
    """Adds ``action`` = ``mu`` (``tanh(mu)`` with ``tanh=True``): the mode of a Gaussian actor, for
    evaluation. An output that already has ``action`` (a deterministic actor) is left unchanged."""

    def __init__(self, model: Model, tanh: bool = False) -> None:
        super().__init__(model)
        self._tanh = bool(tanh)

    def forward(self, *args: object, **kwargs: object) -> Dict[str, torch.Tensor]:
        out: Dict[str, torch.Tensor] = self._model.forward(*args, **kwargs)
        if "action" not in out:
            out["action"] = torch.tanh(out["mu"]) if self._tanh else out["mu"]
        return out


class GaussianNoise:
    """i.i.d. ``Normal(mu, sigma)`` noise."""

    def __init__(self, mu: float = 0.0, sigma: float = 0.1) -> None:
        self.mu, self.sigma = float(mu), float(sigma)

    def __call__(self, like: torch.Tensor) -> torch.Tensor:
        return self.mu + self.sigma * torch.randn_like(like)

    def reset(self) -> None:
        pass


class OUNoise:
    """Ornstein-Uhlenbeck noise ``x += theta * (mu - x) * dt + sigma * sqrt(dt) * N(0, 1)``, one
    process per row of the action batch (restarted at ``x0`` when the batch shape changes)."""

    def __init__(self, mu: float = 0.0, sigma: float = 0.3, theta: float = 0.15, dt: float = 1e-2,
                 x0: float = 0.0) -> None:
        self.mu, self.sigma, self.theta, self.dt, self.x0 = float(mu), float(sigma), float(theta), float(dt), float(x0)
        self._x: Optional[torch.Tensor] = None

    def __call__(self, like: torch.Tensor) -> torch.Tensor:
        if self._x is None or self._x.shape != like.shape:
            self._x = torch.full_like(like, self.x0)
        dx = self.theta * (self.mu - self._x) * self.dt + self.sigma * math.sqrt(self.dt) * torch.randn_like(like)
        self._x = self._x + dx
        return self._x

    def reset(self) -> None:
        self._x = None


NOISE_TYPES = {"gauss": GaussianNoise, "ou": OUNoise}
UNIT_RANGE = {"min": -1.0, "max": 1.0}  # read only


@WRAPPER_REGISTRY.register("action_noise")
class ActionNoiseWrapper(IModelWrapper):
    """Adds exploration noise to ``action`` (when the output has one; other outputs pass through):
    ``action = clamp(action + clamp(noise, *noise_range), *action_range)``; ``None`` ranges don't
    clamp (``action_range`` defaults to [-1, 1]). ``forward(..., sigma=s)`` changes the noise scale
    from then on. Out of place (DI-engine adds in place)."""

    def __init__(self, model: Model, noise_type: str = "gauss", noise_kwargs: Optional[Dict[str, float]] = None,
                 noise_range: Optional[Dict[str, float]] = None,
                 action_range: Optional[Dict[str, float]] = UNIT_RANGE) -> None:
        super().__init__(model)
        if noise_type not in NOISE_TYPES:
            raise ConfigError(f"unknown noise_type '{noise_type}'; valid choices: {', '.join(sorted(NOISE_TYPES))}")
        self._noise = NOISE_TYPES[noise_type](**(noise_kwargs or {}))
        self._noise_range = None if noise_range is None else (float(noise_range["min"]), float(noise_range["max"]))
        self._action_range = None if action_range is None else (float(action_range["min"]), float(action_range["max"]))

    def forward(self, *args: object, sigma: Optional[float] = None, **kwargs: object) -> Dict[str, torch.Tensor]:
        if sigma is not None:
            self._noise.sigma = float(sigma)
        out: Dict[str, torch.Tensor] = self._model.forward(*args, **kwargs)
        if "action" in out:
            noise = self._noise(out["action"])
            if self._noise_range is not None:
                noise = noise.clamp(*self._noise_range)
            action = out["action"] + noise
            out["action"] = action.clamp(*self._action_range) if self._action_range is not None else action
        return out

    def reset(self, data_id: Optional[List[int]] = None, **kwargs: object) -> None:
        """Restart the noise process."""
        self._noise.reset()
        super().reset(data_id=data_id, **kwargs)


def model_wrap(model: Model, wrapper_name: Optional[str] = None, **kwargs: object) -> IModelWrapper:
    """Wrap ``model`` with the wrapper registered as ``wrapper_name`` (sharing its parameters)."""
    if wrapper_name is None:
        wrapper_name = "base"
    return WRAPPER_REGISTRY.build_as(IModelWrapper, wrapper_name, model, **kwargs)
