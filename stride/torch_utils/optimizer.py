"""The policies' optimizer: torch's Adam, stepped through torch's public functional API.

``adam()`` builds a plain ``torch.optim.Adam`` (fused kernel where the device has one, else
``foreach``): its ``state_dict`` is torch's own. ``step(opt)`` and ``zero_grad(opt)`` are what the
policies call instead of ``opt.step()`` / ``opt.zero_grad()``: once every parameter has its state,
``step`` hands the same state tensors to ``torch.optim.adam.adam`` (the functional form that
``Adam.step`` itself ends in, public in ``torch.optim.adam.__all__``), skipping ``Adam.step``'s
per-call Python layers (profiler scope, hook dispatch, grad-mode switch, lazy-state checks).

Why: those layers cost about as much as the kernel for a classic-control MLP. Process CPU per
learner step (``benchmarks/learner_step``, min of 3): CartPole DQN 727 us this way, 784 with
``Adam.step``, 705 with the private kernel calls Stride made before; Pendulum SAC 2847 / 2964 / 2842.
On a whole CartPole DQN run ``Adam.step`` cost 18 % more train CPU than the private calls, this
way 4 % (``benchmarks/README.md``). Anything ``step`` does not
handle -- a parameter without a gradient or without state yet (the first step), sparse or complex
gradients, a tensor ``lr``, ``capturable`` / ``differentiable``, AdamW's decoupled decay, another
optimizer class -- goes through ``opt.step()`` unchanged. Step hooks registered on the optimizer
(``register_step_pre_hook``) run only on that path: Stride's policies register none.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Iterable, List, Optional, Tuple, TypedDict

import torch
import torch.optim.adam as functional_adam

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack

#: devices whose Adam has a fused kernel that Stride uses
FUSED_DEVICES = ("cpu", "cuda")


class AdamOptions(TypedDict, total=False):
    """Adam's hyper-parameters besides ``lr``, as ``torch.optim.Adam`` takes them."""

    betas: Tuple[float, float]
    eps: float
    weight_decay: float
    amsgrad: bool
    maximize: bool


def adam(params: Iterable[torch.Tensor], lr: float, **kwargs: Unpack[AdamOptions]) -> torch.optim.Adam:
    """``torch.optim.Adam`` with the fused kernel where the parameters' device has one, else ``foreach``.

    ``kwargs`` are Adam's own (``eps``, ``weight_decay``, ``betas``, ...)."""
    params = list(params)
    fused = bool(params) and all(p.device.type in FUSED_DEVICES and p.is_floating_point() for p in params)
    if fused:
        return torch.optim.Adam(params, lr=lr, fused=True, **kwargs)
    return torch.optim.Adam(params, lr=lr, foreach=True, **kwargs)


def zero_grad(optimizer: torch.optim.Optimizer) -> None:
    """Drop every parameter's gradient (``optimizer.zero_grad(set_to_none=True)`` without its profiler scope)."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None


#: one parameter group's tensors (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps) and its settings
_Tensors = List[torch.Tensor]
_Group = Tuple[Tuple[_Tensors, _Tensors, _Tensors, _Tensors, _Tensors, _Tensors], Dict[str, Any]]


def step(optimizer: torch.optim.Optimizer) -> None:
    """One update: ``optimizer.step()``, through ``torch.optim.adam.adam`` where it applies (module docstring)."""
    groups = _functional_groups(optimizer)
    if groups is None:
        optimizer.step()
        return
    with torch.no_grad():
        for (params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps), g in groups:
            beta1, beta2 = g["betas"]
            functional_adam.adam(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, foreach=g["foreach"],
                                 fused=g["fused"], amsgrad=g["amsgrad"], beta1=beta1, beta2=beta2, lr=g["lr"],
                                 weight_decay=g["weight_decay"], eps=g["eps"], maximize=g["maximize"])


def _functional_groups(optimizer: torch.optim.Optimizer) -> Optional[List[_Group]]:
    """Every parameter group's tensors; None when any group needs ``optimizer.step()``."""
    if type(optimizer) is not torch.optim.Adam:
        return None
    out: List[_Group] = []
    for group in optimizer.param_groups:
        if (group["capturable"] or group["differentiable"] or group["decoupled_weight_decay"]
                or isinstance(group["lr"], torch.Tensor)):
            return None
        params: _Tensors = []
        grads: _Tensors = []
        exp_avgs: _Tensors = []
        exp_avg_sqs: _Tensors = []
        max_sqs: _Tensors = []
        steps: _Tensors = []
        for p in group["params"]:
            g, s = p.grad, optimizer.state.get(p)
            if g is None or not s or g.is_sparse or torch.is_complex(p):
                return None
            params.append(p)
            grads.append(g)
            exp_avgs.append(s["exp_avg"])
            exp_avg_sqs.append(s["exp_avg_sq"])
            steps.append(s["step"])
            if group["amsgrad"]:
                max_sqs.append(s["max_exp_avg_sq"])
        if params:
            out.append(((params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps), group))
    return out
