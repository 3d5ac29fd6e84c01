"""MinAtar games as Gymnasium ids with Stride's observations, for the benchmarks' evaluators and peers.

``gym.make("bench_common.minatar_chw:MinAtarCHW/Breakout-v1")`` (Gymnasium imports this module, which
registers the ids) is ``MinAtar/Breakout-v1`` behind Stride's public :class:`stride.envs.ChannelFirst`:
``(4, 10, 10)`` uint8 0/1 planes, exactly what ``MinAtarEnv`` gives Stride's learner. The peer (SB3)
trains on the same ids and :func:`bench_common.evaluate.evaluate_batched` evaluates both contestants on
them, so neither side sees a differently shaped or scaled observation.
"""

from __future__ import annotations

import gymnasium as gym

GAMES = ("Asterix", "Breakout", "Freeway", "Seaquest", "SpaceInvaders")
PREFIX = "bench_common.minatar_chw:"


def _maker(game: str):
    def make(**kwargs):
        from stride.envs import ChannelFirst
        from stride.envs.minatar_env import register_minatar

        register_minatar()
        return ChannelFirst(gym.make(f"MinAtar/{game}-v1", **kwargs))

    return make


for _game in GAMES:
    if f"MinAtarCHW/{_game}-v1" not in gym.registry:
        gym.register(id=f"MinAtarCHW/{_game}-v1", entry_point=_maker(_game))
    # all six actions, for a network trained on them (MinAtar's own examples/dqn.py)
    if f"MinAtarCHWFullActions/{_game}-v1" not in gym.registry:
        gym.register(id=f"MinAtarCHWFullActions/{_game}-v1", entry_point=_maker(_game),
                     kwargs=dict(use_minimal_action_set=False))
