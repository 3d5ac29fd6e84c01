"""Entries: pipelines and the ``stride`` command.

The pipelines are imported on first use, so ``stride`` answers a mistyped flag without loading torch.
"""

from typing import Any

__all__ = ["serial_pipeline", "serial_pipeline_onpolicy", "serial_pipeline_reward_model",
           "serial_pipeline_reward_model_onpolicy", "eval_pipeline", "parallel_pipeline", "collect_demo_data",
           "serial_pipeline_offline", "league_pipeline"]


def __getattr__(name: str) -> Any:
    if name == "serial_pipeline":
        from .serial_entry import serial_pipeline

        return serial_pipeline
    if name == "serial_pipeline_onpolicy":
        from .serial_entry_onpolicy import serial_pipeline_onpolicy

        return serial_pipeline_onpolicy
    if name in ("serial_pipeline_reward_model", "serial_pipeline_reward_model_onpolicy"):
        from . import serial_entry_reward_model

        return getattr(serial_entry_reward_model, name)
    if name == "eval_pipeline":
        from .eval_entry import eval_pipeline

        return eval_pipeline
    if name == "collect_demo_data":
        from .collect_demo import collect_demo_data

        return collect_demo_data
    if name == "serial_pipeline_offline":
        from .serial_entry_offline import serial_pipeline_offline

        return serial_pipeline_offline
    if name == "league_pipeline":
        from .league_entry import league_pipeline

        return league_pipeline
    if name == "parallel_pipeline":  # imports Ray only when a run starts
        from .parallel.pipeline import parallel_pipeline

        return parallel_pipeline
    raise AttributeError(f"module 'stride.entry' has no attribute '{name}'")
