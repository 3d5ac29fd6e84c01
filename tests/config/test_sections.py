"""The compiler asks each registry for its section (``stride.utils.registry.Section``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Dict

from stride.config import Config, compile_config, setting
from stride.config.compile import load_saved_config
from stride.config.config import get_dotted
from stride.utils.registry import ALL_REGISTRIES, COLLECTOR_REGISTRY, Section
from stride.worker.collector.sample_collector import SampleCollector, SampleCollectorConfig
from stride.zoo.cartpole.config import cartpole_dqn_config as zoo


def _compile(main: Dict[str, Any]) -> Config:
    return compile_config(main, copy.deepcopy(zoo.create_config), save_cfg=False)


def test_every_section_of_a_compiled_config_comes_from_its_registry() -> None:
    cfg = _compile(copy.deepcopy(zoo.main_config))
    for registry in ALL_REGISTRIES:
        where = registry.section
        if where is None or where.default is None:
            continue
        node = get_dotted(cfg, where.path)
        assert isinstance(node, dict), where.path
        kind = node["type"] if where.record_type else where.default_type(lambda k: get_dotted(cfg, k))
        assert set(registry.get(kind).declared_config()) - {"type"} <= set(node), where.path


def test_a_type_the_user_names_brings_its_own_declaration() -> None:
    main = copy.deepcopy(zoo.main_config)
    main["policy"]["collect"]["collector"] = dict(type="episode", get_train_sample=True)
    cfg = _compile(main)
    assert cfg.policy.collect.collector == dict(type="episode", collect_print_freq=100, get_train_sample=True)


@dataclass(frozen=True)
class _LoudConfig(SampleCollectorConfig):
    type: str = "loud_test"
    volume: int = setting(3, "[0, 10]")


class _Loud(SampleCollector):
    config_view = _LoudConfig


def test_a_newly_registered_component_needs_no_line_in_the_compiler(tmp_path: object) -> None:
    COLLECTOR_REGISTRY.register("loud_test", _Loud)
    create = dict(copy.deepcopy(zoo.create_config), collector=dict(type="loud_test"))
    cfg = compile_config(copy.deepcopy(zoo.main_config), create, save_cfg=True, exp_name=f"{tmp_path}/run")
    assert cfg.policy.collect.collector == dict(type="loud_test", collect_print_freq=100, volume=3)
    # a saved config names the type in its own section: loading it finds the same declaration
    assert load_saved_config(f"{cfg.exp_name}/total_config.json").policy.collect.collector.volume == 3


def test_a_section_default_may_depend_on_the_config() -> None:
    where = COLLECTOR_REGISTRY.section
    assert isinstance(where, Section)
    assert where.default_type({"policy.collect.n_episode": 4}.get) == "episode"
    assert where.default_type({"policy.collect.n_sample": 4}.get) == "sample"
