"""Entries: pipelines and the ``stride`` command."""

from .serial_entry import serial_pipeline

__all__ = ["serial_pipeline"]
