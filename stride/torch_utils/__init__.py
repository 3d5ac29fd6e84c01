"""Torch helpers: nested structures to tensors / devices, the policies' optimizer."""

from .data_helper import to_tensor, to_device, to_ndarray
from .optimizer import adam, step, zero_grad

__all__ = ["to_tensor", "to_device", "to_ndarray", "adam", "step", "zero_grad"]
