"""Torch helpers: nested structures to tensors / devices."""

from .data_helper import to_tensor, to_device, to_ndarray
from .optimizer import FusedAdam, adam

__all__ = ["to_tensor", "to_device", "to_ndarray", "adam", "FusedAdam"]
