"""Convert nested structures (dict / list / tuple / namedtuple) of arrays, numbers and tensors."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, TypeVar, Union, overload

import numpy as np
import torch

from ..utils.data import Nested

_M = TypeVar("_M", bound=torch.nn.Module)


def to_tensor(item: Nested, dtype: Optional[torch.dtype] = None, ignore_keys: Sequence[str] = ()) -> Nested:
    """Recursively turn arrays and numbers into tensors.

    Float64 arrays become float32 unless ``dtype`` says otherwise (networks run in float32);
    strings, ``None`` and keys in ``ignore_keys`` are left as they are.
    """
    if isinstance(item, torch.Tensor):
        return item if dtype is None else item.to(dtype)
    if isinstance(item, np.ndarray):
        if item.dtype == object:
            raise TypeError(f"cannot convert an object array to a tensor: {item!r}")
        t = torch.from_numpy(item if item.flags.c_contiguous else np.ascontiguousarray(item))
        if dtype is not None:
            return t.to(dtype)
        return t.float() if t.dtype == torch.float64 else t
    if isinstance(item, dict):
        return {k: v if k in ignore_keys else to_tensor(v, dtype, ignore_keys) for k, v in item.items()}
    if isinstance(item, tuple) and hasattr(item, "_fields"):
        make: Callable[..., Nested] = type(item)  # a namedtuple class takes its fields positionally
        return make(*[to_tensor(v, dtype, ignore_keys) for v in item])
    if isinstance(item, (list, tuple)):
        if item and all(isinstance(v, (int, float, np.number, np.bool_)) and not isinstance(v, bool) for v in item):
            return to_tensor(np.asarray(item), dtype)
        return type(item)(to_tensor(v, dtype, ignore_keys) for v in item)
    if isinstance(item, np.bool_):
        return torch.tensor(bool(item))
    if isinstance(item, bool) or item is None or isinstance(item, str):
        return item
    if isinstance(item, (int, np.integer)):
        return torch.tensor(int(item), dtype=dtype or torch.int64)
    if isinstance(item, (float, np.floating)):
        return torch.tensor(float(item), dtype=dtype or torch.float32)
    raise TypeError(f"to_tensor does not support {type(item).__name__}: {item!r}")


@overload
def to_device(item: _M, device: str | torch.device, ignore_keys: Sequence[str] = ()) -> _M: ...


@overload
def to_device(item: Nested, device: str | torch.device, ignore_keys: Sequence[str] = ()) -> Nested: ...


def to_device(item: Union[Nested, torch.nn.Module], device: str | torch.device,
              ignore_keys: Sequence[str] = ()) -> Union[Nested, torch.nn.Module]:
    """Recursively move tensors (and modules) to ``device``; other values are left alone.

    The one way Stride moves data between host and GPU, each tensor in one copy that does not stop
    the host: a CPU tensor bound for CUDA is pinned and copied ``non_blocking`` (the host goes on --
    sampling the next batch -- while the copy and the kernels queued after it run; dtypes are kept, so
    uint8 frames cross as bytes and become float on the device); CUDA tensors bound for the CPU are
    all copied ``non_blocking`` into pinned memory and waited for once, at the end (a state dict of
    n tensors: one synchronisation, not n). Tensors already on ``device`` are returned as they are."""
    if isinstance(item, torch.nn.Module):
        return item.to(device)
    from_cuda: List[bool] = []
    out: Nested = _to_device(item, torch.device(device), ignore_keys, from_cuda)
    if from_cuda:  # the non-blocking device-to-host copies must land before anyone reads them
        torch.cuda.synchronize()
    return out


def _to_device(item: Any, device: torch.device, ignore_keys: Sequence[str], from_cuda: List[bool]) -> Any:
    """``item`` (nested values, modules among them) on ``device``."""
    if isinstance(item, torch.Tensor):
        return _move(item, device, from_cuda)
    if isinstance(item, torch.nn.Module):
        return item.to(device)
    if isinstance(item, dict):
        return {k: v if k in ignore_keys else _to_device(v, device, ignore_keys, from_cuda) for k, v in item.items()}
    if isinstance(item, tuple) and hasattr(item, "_fields"):
        make: Callable[..., Nested] = type(item)  # a namedtuple class takes its fields positionally
        return make(*[_to_device(v, device, ignore_keys, from_cuda) for v in item])
    if isinstance(item, (list, tuple)):
        return type(item)(_to_device(v, device, ignore_keys, from_cuda) for v in item)
    return item


def _move(t: torch.Tensor, device: torch.device, from_cuda: List[bool]) -> torch.Tensor:
    """``t`` on ``device`` (see :func:`to_device`); ``from_cuda`` gets an entry for a copy still in flight."""
    if t.device == device:
        return t
    src = t.device.type
    if src == "cpu" and device.type == "cuda":
        return (t if t.is_pinned() else t.pin_memory()).to(device, non_blocking=True)
    if src == "cuda" and device.type == "cpu":
        from_cuda.append(True)
        return t.to(device, non_blocking=True)
    return t.to(device)


def to_ndarray(item: Nested) -> Nested:
    """Recursively turn tensors into NumPy arrays."""
    if isinstance(item, torch.Tensor):
        return item.detach().cpu().numpy()
    if isinstance(item, dict):
        return {k: to_ndarray(v) for k, v in item.items()}
    if isinstance(item, tuple) and hasattr(item, "_fields"):
        make: Callable[..., Nested] = type(item)  # a namedtuple class takes its fields positionally
        return make(*[to_ndarray(v) for v in item])
    if isinstance(item, (list, tuple)):
        return type(item)(to_ndarray(v) for v in item)
    return item


def cat_nested(items: Sequence[Nested]) -> Nested:
    """Tensors concatenated along dim 0; dicts of them key by key (e.g. ``{'observation',
    'action_mask'}`` batches): one forward over several batches of the same structure."""
    first = items[0]
    if isinstance(first, torch.Tensor):
        return torch.cat([t for t in items if isinstance(t, torch.Tensor)])
    if isinstance(first, dict):
        return {k: cat_nested([item[k] for item in items if isinstance(item, dict)]) for k in first}
    raise TypeError(f"cat_nested takes tensors or dicts of tensors, not {type(first).__name__}")
