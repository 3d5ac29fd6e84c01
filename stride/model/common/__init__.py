"""Building blocks: encoders and heads."""

from .encoder import FCEncoder, MLP
from .head import DiscreteHead, DuelingHead

__all__ = ["FCEncoder", "MLP", "DiscreteHead", "DuelingHead"]
