"""Image encoders (stride.model.common): Nature CNN, MinAtar conv, the templates' choice of encoder."""

from __future__ import annotations

import pytest
import torch

from stride.config import compile_config
from stride.model import DQN, VAC
from stride.model.common import (BoardEncoder, ConvEncoder, DuelingHead, FCEncoder, MinAtarEncoder, NatureCNN, build_encoder,
                                 pick_encoder)
from stride.utils.errors import ConfigError


def test_nature_cnn_layers_and_shapes():
    enc = NatureCNN((4, 84, 84))
    convs = [m for m in enc.convs if isinstance(m, torch.nn.Conv2d)]
    assert [(c.out_channels, c.kernel_size, c.stride) for c in convs] == [(32, (8, 8), (4, 4)), (64, (4, 4), (2, 2)),
                                                                          (64, (3, 3), (1, 1))]
    assert enc.fc[1].in_features == 64 * 7 * 7 and enc.output_size == 512
    assert enc(torch.zeros(3, 4, 84, 84, dtype=torch.uint8)).shape == (3, 512)
    assert enc(torch.zeros(2, 5, 4, 84, 84, dtype=torch.uint8)).shape == (2, 5, 512)  # leading dims kept


def test_minatar_encoder_layers_and_shapes():
    enc = MinAtarEncoder((6, 10, 10))
    (conv,) = [m for m in enc.convs if isinstance(m, torch.nn.Conv2d)]
    assert (conv.out_channels, conv.kernel_size, conv.stride) == (16, (3, 3), (1, 1))
    assert enc.fc[1].in_features == 16 * 8 * 8 and enc.output_size == 128
    assert enc(torch.ones(7, 6, 10, 10, dtype=torch.uint8)).shape == (7, 128)


def test_uint8_is_scaled_inside_the_model():
    torch.manual_seed(0)
    enc = NatureCNN((4, 84, 84))
    raw = torch.randint(0, 256, (2, 4, 84, 84), dtype=torch.uint8)
    assert torch.allclose(enc(raw), enc.fc(enc.convs(raw.float() / 255.0)), atol=1e-6)
    assert torch.equal(enc(raw), enc(raw.float()))  # the same values in float are scaled the same way
    mini = MinAtarEncoder((4, 10, 10))
    planes = torch.randint(0, 2, (2, 4, 10, 10), dtype=torch.uint8)
    assert torch.equal(mini(planes), mini(planes.float()))  # 0/1 planes: no scaling
    assert mini(planes.bool()).shape == (2, 128)


def test_pick_encoder_from_obs_shape():
    assert pick_encoder(4) == "mlp" and pick_encoder([8]) == "mlp"
    assert pick_encoder((4, 84, 84)) == "nature" and pick_encoder([3, 36, 36]) == "nature"
    assert pick_encoder((4, 10, 10)) == "minatar"
    assert isinstance(build_encoder((4, 84, 84), None, [64], "relu"), NatureCNN)
    assert isinstance(build_encoder((4, 10, 10), None, [64], "relu"), MinAtarEncoder)
    assert isinstance(build_encoder((4, 10, 10), "mlp", [64], "relu"), FCEncoder)


def test_bad_encoder_choices_are_one_line():
    with pytest.raises(ConfigError, match="unknown encoder 'cnn'; valid choices: nature, minatar, board, mlp"):
        build_encoder((4, 84, 84), "cnn", [64], "relu")
    with pytest.raises(ConfigError, match="needs an image obs_shape"):
        NatureCNN(4)
    with pytest.raises(ConfigError, match="encoder='minatar'"):
        NatureCNN((4, 10, 10))


def test_config_validates_encoder_choice():
    main = dict(env=dict(env_id="CartPole-v1"), policy=dict(model=dict(obs_shape=4, action_shape=2, encoder="cnn")))
    create = dict(env=dict(type="gymnasium"), env_manager=dict(type="base"), policy=dict(type="dqn"))
    with pytest.raises(ConfigError) as e:
        compile_config(main, create)
    msg = str(e.value)
    assert "\n" not in msg and "encoder" in msg and all(c in msg for c in ("nature", "minatar", "mlp"))


@pytest.mark.parametrize("shape,cls", [((4, 84, 84), NatureCNN), ((4, 10, 10), MinAtarEncoder)])
def test_templates_pick_the_conv_encoder(shape, cls):
    dqn = DQN(shape, 6, dueling=False, head_layer_num=0)
    assert isinstance(dqn.encoder, cls)
    assert dqn(torch.zeros(2, *shape, dtype=torch.uint8))["logit"].shape == (2, 6)
    vac = VAC(shape, 6, actor_head_layer_num=0, critic_head_layer_num=0)
    assert isinstance(vac.actor_encoder, cls) and vac.critic_encoder is vac.actor_encoder
    out = vac(torch.zeros(3, *shape, dtype=torch.uint8))
    assert out["logit"].shape == (3, 6) and out["value"].shape == (3,)
    assert isinstance(VAC(shape, 6, share_encoder=False).critic_encoder, ConvEncoder)


def test_mlp_path_is_the_old_one_bit_for_bit():
    torch.manual_seed(0)
    dqn = DQN(4, 2)
    torch.manual_seed(0)
    old = torch.nn.ModuleDict(dict(encoder=FCEncoder(4, [128, 128, 64], "relu"), head=DuelingHead(64, 2, 1, "relu")))
    new, ref = dqn.state_dict(), old.state_dict()
    assert list(new) == list(ref) and all(torch.equal(new[k], ref[k]) for k in ref)
    assert isinstance(DQN(4, 2, encoder="mlp").encoder, FCEncoder)
    assert isinstance(VAC(4, 2).actor_encoder, FCEncoder)


def test_board_encoder_reads_channel_last_planes():
    enc = BoardEncoder((6, 7, 2))
    (conv,) = [m for m in enc.convs if isinstance(m, torch.nn.Conv2d)]
    assert (conv.in_channels, conv.out_channels, conv.kernel_size) == (2, 64, (4, 4))
    assert enc.fc[1].in_features == 64 * 3 * 4 and enc.output_size == 256
    planes = torch.randint(0, 2, (5, 6, 7, 2), dtype=torch.int8)  # PettingZoo's connect four planes
    assert enc(planes).shape == (5, 256)
    # the conv sees channel c of cell (row, col) as planes[..., row, col, c]: a filter on plane 1 only
    with torch.no_grad():
        conv.weight.zero_()
        conv.bias.zero_()
        conv.weight[0, 1] = 1.0
    x = torch.zeros(1, 6, 7, 2)
    x[0, 0:4, 0, 1] = 1.0  # a vertical four of the second plane in column 0
    out = enc.convs(x)[0, 0]  # windows at (row, col) cover rows row..row+3, cols col..col+3
    assert (out[0, 0], out[1, 0], out[2, 0], out[0, 1]) == (4.0, 3.0, 2.0, 0.0)
    assert BoardEncoder((3, 3, 2))(torch.zeros(2, 3, 3, 2)).shape == (2, 256)  # tic-tac-toe: one 3x3 window
    assert isinstance(build_encoder((6, 7, 2), "board", [64], "relu"), BoardEncoder)
    with pytest.raises(ConfigError, match="channel-last planes"):
        BoardEncoder(42)
