"""Config: nested dicts with attribute access; ``compile_config`` merges, validates and saves."""

from .config import Config, merge_config, save_config, load_json_config, REQUIRED
from .compile import compile_config, default_main_config

__all__ = ["Config", "merge_config", "save_config", "load_json_config", "REQUIRED", "compile_config",
           "default_main_config"]
