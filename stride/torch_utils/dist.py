"""Learner replicas over ``torch.distributed``: join a process group, agree on weights, average gradients.

A process group is joined from torchrun's environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``) or from explicit arguments (a Ray pipeline that places the replicas itself).
Backend ``gloo`` for CPU models, ``nccl`` for CUDA ones. Outside a process group every function
here is the single-process identity (rank 0 of 1, nothing to average), so callers have one code
path.

Better than DI-engine's ``pytorch_ddp_dist_helper`` on purpose:

- no hard-coded port (DI's 10314): the caller's or torchrun's, or :func:`free_port`; the address
  defaults to 127.0.0.1, never all interfaces;
- gradients are averaged in one flat bucket per (device, dtype), one collective each, instead of
  one ``all_reduce`` per parameter; the "which rank has a gradient" indicators ride in the same
  bucket, so a parameter that only some replicas touched is averaged over those replicas, and one
  that no replica touched keeps no gradient on any (DI gives it a zero gradient, which Adam's
  moments still act on);
- :func:`dist_finalize` really destroys the group (DI's is a no-op);
- a missing launcher is one line saying how to launch, not a hang on an unreachable master.
"""

from __future__ import annotations

import datetime
import os
import socket
from collections import defaultdict
from typing import Dict, Iterable, List, Optional, Tuple

import torch
import torch.distributed as dist
from torch import nn

from ..utils.errors import ConfigError

#: where rank 0 listens unless told otherwise (loopback: nothing outside this machine can join)
DEFAULT_ADDR = "127.0.0.1"
BACKENDS = ("gloo", "nccl")
LAUNCH_HINT = "launch one process per replica with torchrun, e.g. `torchrun --standalone --nproc_per_node=2 -m stride -m serial ...`"


def free_port(addr: str = DEFAULT_ADDR) -> int:
    """A TCP port that is free on ``addr`` now (the OS picks it), for a caller that starts rank 0."""
    with socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((addr, 0))
        return int(s.getsockname()[1])


def _env_int(name: str) -> Optional[int]:
    raw = os.environ.get(name)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"environment variable {name}={raw!r} is not a whole number") from None


def dist_init(rank: Optional[int] = None, world_size: Optional[int] = None, addr: Optional[str] = None,
              port: Optional[int] = None, backend: Optional[str] = None, timeout_s: float = 1800.0) -> bool:
    """Join the process group of ``world_size`` replicas as ``rank``; returns whether this call
    created it (False: one already exists with the same rank and size, and is kept).

    Each argument left out comes from torchrun's environment (``RANK``, ``WORLD_SIZE``,
    ``MASTER_ADDR``, ``MASTER_PORT``); the address defaults to 127.0.0.1. ``backend``: ``'gloo'``
    (CPU tensors) or ``'nccl'`` (CUDA tensors; each process takes GPU ``LOCAL_RANK``); default:
    nccl where CUDA is available, else gloo. ``timeout_s`` (torch's default, 30 min) bounds every
    collective, so a replica that died makes the others fail instead of hang forever."""
    rank = _env_int("RANK") if rank is None else rank
    world_size = _env_int("WORLD_SIZE") if world_size is None else world_size
    if rank is None or world_size is None:
        raise ConfigError(f"no torch.distributed launcher found (RANK / WORLD_SIZE unset): {LAUNCH_HINT}")
    if world_size < 1 or not 0 <= rank < world_size:
        raise ConfigError(f"rank {rank} is outside [0, {world_size - 1}] (world size {world_size})")
    backend = backend or ("nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo")
    if backend not in BACKENDS:
        raise ConfigError(f"unknown torch.distributed backend {backend!r}; valid choices: {', '.join(BACKENDS)}")
    if backend == "nccl" and not torch.cuda.is_available():
        raise ConfigError("backend 'nccl' needs CUDA, which this machine lacks; valid choices here: gloo")
    if dist.is_initialized():
        if (dist.get_rank(), dist.get_world_size()) != (rank, world_size):
            raise ConfigError(f"a process group already exists as rank {dist.get_rank()} of {dist.get_world_size()}, "
                              f"not rank {rank} of {world_size}")
        return False
    addr = addr or os.environ.get("MASTER_ADDR") or DEFAULT_ADDR
    port = _env_int("MASTER_PORT") if port is None else port
    if port is None:
        raise ConfigError(f"no port for rank 0 (MASTER_PORT unset): pass port= (every rank the same, e.g. from "
                          f"free_port() on rank 0's machine) or {LAUNCH_HINT}")
    if backend == "nccl":
        torch.cuda.set_device((_env_int("LOCAL_RANK") or rank) % torch.cuda.device_count())
    host = f"[{addr}]" if ":" in addr else addr
    dist.init_process_group(backend, init_method=f"tcp://{host}:{port}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=timeout_s))
    return True


def dist_finalize(together: bool = False) -> None:
    """Leave and destroy the process group (nothing to do outside one).

    ``together``: first wait until every replica has come here (a barrier), so that no replica
    tears its connections down while another still holds them -- a replica that left early was
    seen to abort (gloo, "terminate called without an active exception") while rank 0 was still
    evaluating. Only for a normal end: after an error the others may be gone, and the barrier
    would wait for them until the group's timeout."""
    if not dist.is_initialized():
        return
    if together and dist.get_world_size() > 1:
        dist.barrier()
    dist.destroy_process_group()


def in_process_group() -> bool:
    """Whether this process has joined a process group (:func:`dist_init` or the user's own)."""
    return dist.is_available() and dist.is_initialized()


def get_rank() -> int:
    """This replica's rank (0 outside a process group)."""
    return dist.get_rank() if in_process_group() else 0


def get_world_size() -> int:
    """The number of replicas (1 outside a process group)."""
    return dist.get_world_size() if in_process_group() else 1


def _collective_device() -> torch.device:
    """Where small control tensors must live for the group's backend (NCCL: the current GPU)."""
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def any_rank(flag: bool) -> bool:
    """True on every replica when ``flag`` is true on any (one collective); ``flag`` itself outside
    a process group. Loops use it so that all replicas leave together (a replica that stopped
    alone would leave the others waiting in their next all-reduce)."""
    if get_world_size() == 1:
        return flag
    t = torch.tensor([int(flag)], dtype=torch.int32, device=_collective_device())
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


#: (element count, mean, biased variance) of a tensor's elements
Moments = Tuple[int, torch.Tensor, torch.Tensor]


def local_moments(x: torch.Tensor) -> Moments:
    """(count, mean, biased variance) of ``x``'s elements in this process."""
    return x.numel(), x.mean(), x.var(unbiased=False)


def moments(x: torch.Tensor) -> Moments:
    """(count, mean, biased variance) of the elements of ``x`` on all replicas together: the
    statistics one learner holding the union of their batches would take (:func:`local_moments`
    outside a process group). Two collectives: the count and sum, then the squared deviations
    from the global mean (two-pass: no cancellation), reduced in float64."""
    if get_world_size() == 1:
        return local_moments(x)
    flat = x.detach().reshape(-1).double()
    head = torch.stack([torch.tensor(float(flat.numel()), dtype=torch.float64, device=x.device), flat.sum()])
    dist.all_reduce(head)
    n = int(head[0].item())
    mean = head[1] / n
    dev = ((flat - mean) ** 2).sum().reshape(1)
    dist.all_reduce(dev)
    return n, mean.to(x.dtype), (dev[0] / n).to(x.dtype)


def check_same(value: int, what: str) -> None:
    """Raise when ``value`` differs between replicas (one collective): steps that all-reduce must
    come in the same number on every replica, or they would pair up wrongly or wait forever."""
    if get_world_size() == 1:
        return
    t = torch.tensor([value, -value], dtype=torch.int64, device=_collective_device())
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    high, low = int(t[0].item()), -int(t[1].item())
    if high != low:
        raise ConfigError(f"learner replicas disagree on {what}: from {low} to {high} (this replica: {value}); "
                          f"they must be equal on every replica")


def _buckets(tensors: Iterable[torch.Tensor]) -> Dict[Tuple[torch.device, torch.dtype], List[torch.Tensor]]:
    """Tensors grouped by (device, dtype), each group in the given order: one flat buffer each."""
    groups: Dict[Tuple[torch.device, torch.dtype], List[torch.Tensor]] = defaultdict(list)
    for t in tensors:
        groups[(t.device, t.dtype)].append(t)
    return groups


def broadcast_module(module: nn.Module, src: int = 0) -> None:
    """Overwrite every parameter and buffer of ``module`` with rank ``src``'s (one broadcast per
    (device, dtype)), so that replicas start from identical weights and statistics."""
    if get_world_size() == 1:
        return
    with torch.no_grad():
        state = [t for t in module.state_dict(keep_vars=True).values() if isinstance(t, torch.Tensor)]
        for group in _buckets(state).values():
            tensors = [t.detach() for t in group]
            flat = torch.cat([t.reshape(-1) for t in tensors])
            dist.broadcast(flat, src)
            for t, part in zip(tensors, torch.split(flat, [t.numel() for t in tensors])):
                t.copy_(part.view_as(t))


def allreduce_gradients(params: Iterable[torch.Tensor]) -> None:
    """Replace each parameter's gradient by its mean over the replicas that computed one.

    One flat bucket per (device, dtype): the gradients (zeros where a replica has none) followed by
    one indicator per parameter (1 where this replica has a gradient), summed by one ``all_reduce``.
    A parameter's mean divides by its summed indicator, so a replica that did not touch it does not
    drag it towards zero; a parameter no replica touched keeps ``grad=None`` everywhere (the
    optimizer skips it on every replica alike)."""
    if get_world_size() == 1:
        return
    with torch.no_grad():
        for group in _buckets(p for p in params if p.requires_grad).values():
            grads = [p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel(), dtype=p.dtype, device=p.device)
                     for p in group]
            have = torch.tensor([p.grad is not None for p in group], dtype=group[0].dtype, device=group[0].device)
            flat = torch.cat([*grads, have])
            dist.all_reduce(flat)
            *summed, count = torch.split(flat, [p.numel() for p in group] + [len(group)])
            for p, g, n in zip(group, summed, count.tolist()):
                if n == 0:
                    p.grad = None
                    continue
                p.grad = g.view_as(p).div_(n)  # a view of this call's fresh buffer: no copy back
