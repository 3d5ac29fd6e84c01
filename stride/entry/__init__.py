"""Entries: pipelines and the ``stride`` command."""

from .serial_entry import serial_pipeline
from .serial_entry_onpolicy import serial_pipeline_onpolicy

__all__ = ["serial_pipeline", "serial_pipeline_onpolicy"]
