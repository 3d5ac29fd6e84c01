"""stride.entry.serial_entry: the parts serial_pipeline is made of refuse what they cannot do in one line."""

from __future__ import annotations

import pytest

from stride.config import Config
from stride.entry.serial_entry import load_cfg, random_collect, serial_pipeline
from stride.utils.errors import ConfigError


def test_no_config_and_no_resume_is_one_line():
    with pytest.raises(ConfigError, match="give a config"):
        load_cfg(None, 0, None, None)
    with pytest.raises(ConfigError, match="give a config"):
        serial_pipeline(None)


def test_random_collect_needs_a_sample_collector():
    cfg = Config({"seed": 0, "policy": {"random_collect_size": 10}})
    with pytest.raises(ConfigError, match="random_collect_size=10 needs a sample collector"):
        random_collect(cfg, None, object(), None)
