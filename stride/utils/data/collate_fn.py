"""Stack samples into a batch and split a batch back into samples.

Unlike DI-engine's ``default_collate``, a shape-``(1,)`` element is stacked to ``(B, 1)`` like
any other shape (no silent ``cat`` to ``(B,)``), and ``default_decollate`` is its exact inverse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Callable, List, Type, TypeVar

import numpy as np
import torch

from .nested import Nested

_K = TypeVar("_K")


def default_collate(batch: Sequence[Nested]) -> Nested:
    """List of samples (nested dict / list / tuple of tensors, arrays, numbers) -> one batch.

    Tensors and arrays are stacked on a new first dim (arrays become tensors); Python floats
    become float32, ints int64 and bools bool tensors; strings and ``None`` stay lists.
    """
    if len(batch) == 0:
        raise ValueError("default_collate needs at least one sample")
    elem = batch[0]
    if isinstance(elem, torch.Tensor):
        return torch.stack([_of(torch.Tensor, e) for e in batch], 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype == object:
            raise TypeError("default_collate cannot stack object arrays")
        return torch.from_numpy(np.stack([np.asarray(e) for e in batch], 0))
    if isinstance(elem, np.generic):
        return torch.from_numpy(np.asarray(batch))
    if isinstance(elem, bool):
        return torch.tensor(batch, dtype=torch.bool)
    if isinstance(elem, int):
        return torch.tensor(batch, dtype=torch.int64)
    if isinstance(elem, float):
        return torch.tensor(batch, dtype=torch.float32)
    if isinstance(elem, (str, bytes)) or elem is None:
        return list(batch)
    if isinstance(elem, Mapping):
        samples = [d for d in batch if isinstance(d, Mapping)]
        if len(samples) != len(batch):
            raise TypeError("default_collate: a batch mixes dict samples with other ones")
        return {k: default_collate([d[k] for d in samples]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        make: Callable[..., Nested] = type(elem)  # a namedtuple class takes its fields positionally
        return make(*(default_collate(list(s)) for s in zip(*(_of(tuple, e) for e in batch))))
    if isinstance(elem, Sequence):
        rows = [e for e in batch if isinstance(e, Sequence)]
        if len(rows) != len(batch):
            raise TypeError("default_collate: a batch mixes sequence samples with other ones")
        if any(len(e) != len(elem) for e in rows):
            raise ValueError("default_collate: sequences in a batch must have equal lengths")
        collated = [default_collate(list(s)) for s in zip(*rows)]
        return tuple(collated) if isinstance(elem, tuple) else collated
    raise TypeError(f"default_collate does not support {type(elem).__name__}")


def _of(kind: Type[_K], item: object) -> _K:
    """``item``, which must be a ``kind`` like the batch's first sample."""
    if not isinstance(item, kind):
        raise TypeError(f"default_collate: a batch mixes {kind.__name__} samples with {type(item).__name__} ones")
    return item


def default_decollate(batch: Nested) -> List[Nested]:
    """One batch -> list of samples: the inverse of :func:`default_collate` (tensors are unbound on dim 0)."""
    if isinstance(batch, torch.Tensor):
        return list(torch.unbind(batch, 0))
    if isinstance(batch, np.ndarray):
        return list(batch)
    if isinstance(batch, Mapping):
        cols = {k: default_decollate(v) for k, v in batch.items()}
        n = len(next(iter(cols.values()))) if cols else 0
        if any(len(v) != n for v in cols.values()):
            raise ValueError("default_decollate: fields have different batch sizes")
        return [{k: v[i] for k, v in cols.items()} for i in range(n)]
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return [type(batch)(*s) for s in zip(*(default_decollate(v) for v in batch))]
    if isinstance(batch, (list, tuple)):
        if batch and isinstance(batch[0], (torch.Tensor, np.ndarray, Mapping, list, tuple)):
            kind = tuple if isinstance(batch, tuple) else list
            return [kind(s) for s in zip(*(default_decollate(v) for v in batch))]
        return list(batch)
    raise TypeError(f"default_decollate does not support {type(batch).__name__}")
