"""Building blocks: encoders and heads."""

from .encoder import ENCODERS, BoardEncoder, ConvEncoder, FCEncoder, MinAtarEncoder, MLP, NatureCNN, build_encoder, pick_encoder
from .head import DiscreteHead, DuelingHead
from .masked_obs import MaybeMasked, goal_input, split_mask

__all__ = ["ENCODERS", "BoardEncoder", "ConvEncoder", "FCEncoder", "MinAtarEncoder", "MLP", "NatureCNN", "build_encoder", "pick_encoder",
           "DiscreteHead", "DuelingHead", "MaybeMasked", "goal_input", "split_mask"]
