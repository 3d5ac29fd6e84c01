"""Torch helpers: nested structures to tensors / devices, the policies' optimizer."""

from .data_helper import cat_nested, to_tensor, to_device, to_ndarray
from .optimizer import adam, step, zero_grad

__all__ = ["cat_nested", "to_tensor", "to_device", "to_ndarray", "adam", "step", "zero_grad"]
