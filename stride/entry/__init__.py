"""Entries: pipelines and the ``stride`` command.

The pipelines are imported on first use, so ``stride`` answers a mistyped flag without loading torch.
"""

import importlib
from typing import Any

#: each public entry and the module that defines it (imported when first used: Ray only once a run starts)
_WHERE = {"serial_pipeline": "serial_entry", "serial_pipeline_onpolicy": "serial_entry_onpolicy",
          "serial_pipeline_reward_model": "serial_entry_reward_model",
          "serial_pipeline_reward_model_onpolicy": "serial_entry_reward_model", "eval_pipeline": "eval_entry",
          "parallel_pipeline": "parallel.pipeline", "collect_demo_data": "collect_demo",
          "serial_pipeline_offline": "serial_entry_offline", "league_pipeline": "league_entry"}

__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'stride.entry' has no attribute '{name}'")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
