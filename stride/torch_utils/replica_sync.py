"""How a learner's replicas agree: the strategy every optimiser step is given.

``SingleProcess`` is the identity (one learner: its own gradients, its own batch statistics);
``AllReduce`` averages gradients across the replicas of a ``torch.distributed`` process group and
takes batch statistics over the union of their batches, so N replicas equal one learner on the
whole batch. Better than DI-engine on purpose: one collective per dtype instead of two per
parameter (about 10x less time per step for the zoo's DQN models, ``benchmarks/allreduce``), and
statistics taken from a batch (advantage normalisation, return statistics) come from the union of
the replicas' batches. Knows nothing of policies: an algorithm holds one and hands it to
:func:`optimise`.
"""

from __future__ import annotations

from typing import Iterable, Optional, Union

import torch
from torch import nn

from .dist import LAUNCH_HINT, Moments, allreduce_gradients, broadcast_module, in_process_group, local_moments, moments
from .optimizer import step
from ..utils.errors import ConfigError


def sync_gradients(model: Union[nn.Module, Iterable[torch.Tensor]]) -> None:
    """Average the gradients of ``model`` (a module or its parameters) across the learner
    replicas, in place; a no-op in a single process. See
    :func:`stride.torch_utils.dist.allreduce_gradients` (one bucket per dtype; parameters only some
    replicas touched averaged over those)."""
    allreduce_gradients(model.parameters() if isinstance(model, nn.Module) else model)


class SingleProcess:
    """One learner: gradients and batch statistics are its own (the identity strategy)."""

    #: whether steps run collectives (each replica must then make as many)
    distributed = False

    def sync_gradients(self, params: Iterable[torch.Tensor]) -> None:
        """Nothing to average: the gradients are the whole batch's already."""

    def moments(self, x: torch.Tensor) -> Moments:
        """(count, mean, biased variance) of ``x``."""
        return local_moments(x)

    def standardize(self, x: torch.Tensor) -> torch.Tensor:
        """``(x - mean) / (std + 1e-8)`` with the (unbiased) statistics of :meth:`moments`; ``x``
        unchanged when they cover fewer than 2 elements. Every replica calls it alike (its
        collectives must pair up), whatever the size of its own ``x``."""
        n, mean, var = self.moments(x)
        if n < 2:
            return x
        return (x - mean) / ((var * (n / (n - 1))).sqrt() + 1e-8)


class AllReduce(SingleProcess):
    """Data-parallel replicas, one process each: gradients averaged every step (before the norm
    clip, so all replicas clip the same global gradient and stay identical), batch statistics over
    the union of the replicas' batches."""

    distributed = True

    def sync_gradients(self, params: Iterable[torch.Tensor]) -> None:
        sync_gradients(params)

    def moments(self, x: torch.Tensor) -> Moments:
        return moments(x)


def replica_sync(multi_gpu: bool, model: nn.Module) -> SingleProcess:
    """The strategy for ``policy.learn.multi_gpu``; with replicas, ``model``'s weights are
    broadcast from rank 0 first (before any copy of them, e.g. a target network: all start equal)."""
    if not multi_gpu:
        return SingleProcess()
    if not in_process_group():
        raise ConfigError(f"policy.learn.multi_gpu=True needs a torch.distributed process group: {LAUNCH_HINT}")
    broadcast_module(model)
    return AllReduce()


def optimise(optimizer: torch.optim.Optimizer, loss: torch.Tensor, replicas: SingleProcess,
             grad_clip_norm: Optional[float] = None) -> Optional[torch.Tensor]:
    """One step of ``optimizer`` on ``loss`` -- the one place every algorithm steps: gradients of
    the optimizer's own parameters only (another network's ``.grad`` is left alone), agreed on by
    ``replicas`` *before* the norm clip. Returns the pre-clip gradient norm when ``grad_clip_norm``."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for p, g in zip(params, torch.autograd.grad(loss, params, allow_unused=True)):
        p.grad = g
    replicas.sync_gradients(params)
    norm = None if grad_clip_norm is None else torch.nn.utils.clip_grad_norm_(params, grad_clip_norm)
    step(optimizer)
    return norm
