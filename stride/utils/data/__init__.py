"""Batching: ``default_collate`` and its inverse ``default_decollate``."""

from .collate_fn import default_collate, default_decollate
from .nested import Leaf, Nested

__all__ = ["default_collate", "default_decollate", "Leaf", "Nested"]
