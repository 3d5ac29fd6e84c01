"""Batching: ``default_collate`` and its inverse ``default_decollate``."""

from .collate_fn import default_collate, default_decollate

__all__ = ["default_collate", "default_decollate"]
