"""``Nested``: the type of the data that collate, decollate and the tensor helpers walk through."""

from __future__ import annotations

from typing import Mapping, Sequence, Union

import numpy as np
import numpy.typing as npt
import torch

#: one value at the bottom of a nested structure (``None`` and strings ride along unchanged)
Leaf = Union[torch.Tensor, npt.NDArray[np.generic], np.generic, bool, int, float, str, bytes, None]

#: a leaf, or a dict / list / tuple (namedtuples included) of nested data
Nested = Union[Leaf, Mapping[str, "Nested"], Sequence["Nested"]]
