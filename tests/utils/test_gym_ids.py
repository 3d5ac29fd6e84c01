"""``env_spec``: Gymnasium ids with a ``module:`` prefix, as ``gymnasium.make`` reads them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import gymnasium as gym
import pytest

from stride.utils.errors import ConfigError
from stride.utils.gym_ids import env_spec

USER_MODULE = "stride_test_user_envs"
USER_ID = "StrideUserCartPole-v0"


@pytest.fixture
def user_env_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module that registers ``USER_ID`` when imported (as a user's env package does)."""
    (tmp_path / f"{USER_MODULE}.py").write_text(
        "import gymnasium\n"
        f"gymnasium.register(id={USER_ID!r}, entry_point='gymnasium.envs.classic_control.cartpole:CartPoleEnv',"
        " max_episode_steps=7)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield f"{USER_MODULE}:{USER_ID}"
    gym.registry.pop(USER_ID, None)
    sys.modules.pop(USER_MODULE, None)


def test_a_module_prefix_is_imported_before_the_lookup(user_env_module: str) -> None:
    assert USER_ID not in gym.registry
    with pytest.raises(gym.error.Error):  # what gymnasium.spec alone says of the same id
        gym.spec(user_env_module)
    spec = env_spec(user_env_module)
    assert (spec.id, spec.max_episode_steps) == (USER_ID, 7)
    assert env_spec(USER_ID) is spec  # registered now: the id alone works too


def test_an_id_without_a_prefix_is_gymnasiums_own_lookup() -> None:
    assert env_spec("CartPole-v1") is gym.spec("CartPole-v1")
    with pytest.raises(gym.error.Error):
        env_spec("NoSuchEnv-v0")


@pytest.mark.parametrize("env_id, message", [
    ("stride_no_such_module:CartPole-v1", "cannot import 'stride_no_such_module'"),
    (":CartPole-v1", "expected 'module:EnvName-vN'"),
    ("gymnasium:", "expected 'module:EnvName-vN'"),
])
def test_a_bad_prefix_is_one_line_naming_it(env_id: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        env_spec(env_id)
    assert "\n" not in str(e.value)
