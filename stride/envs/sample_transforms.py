"""Sample transforms: what an env family does to the samples a collector returns.

A transform maps the samples of one ``SampleCollector.collect`` call to the samples it returns
instead -- PettingZoo's board games (``stride.zoo.pettingzoo.board_rules``) add each sample
mirrored left-right, the symmetry the learner would otherwise have to learn from play. An env
class offers its family's transforms through :meth:`BaseEnv.sample_transforms
<stride.envs.BaseEnv.sample_transforms>` (from its config); the entries hand them to the
collector, which calls them without knowing any game. Transforms are registered by name in
:data:`SAMPLE_TRANSFORM_REGISTRY` by the zoo family that knows the game.
"""

from __future__ import annotations

from typing import Callable, Dict, List, cast

from ..utils.registry import Registry

#: the samples of one collect -> the samples returned instead
SampleTransform = Callable[[List[Dict[str, object]]], List[Dict[str, object]]]

#: sample transforms by name, registered by the zoo families (imported by name on the first lookup)
SAMPLE_TRANSFORM_REGISTRY: Registry[Callable[..., object]] = Registry("sample transform", plugins="stride.zoo")


def get_sample_transform(name: str) -> SampleTransform:
    """The sample transform registered as ``name``, or a one-line error naming the choices."""
    return cast(SampleTransform, SAMPLE_TRANSFORM_REGISTRY.get(name))
