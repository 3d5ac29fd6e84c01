"""Config: nested dicts with attribute access; ``compile_config`` merges, validates and saves."""

from .config import Config, Configurable, declaration, merge_config, save_config, load_json_config
from .setting import REQUIRED, Setting
from .view import ConfigView, setting, subsection
from .compile import compile_config, default_main_config

__all__ = ["Config", "Configurable", "Setting", "declaration", "merge_config", "save_config", "load_json_config",
           "REQUIRED", "compile_config", "default_main_config", "ConfigView", "setting", "subsection"]
