"""``PettingZooEnv``: a PettingZoo env (AEC or parallel) as a Stride ``BaseEnv`` keyed by agent.

One step of this env is one decision point of the game:

- ``obs``: ``{agent: observation}`` of the agents that act next -- every live agent of a parallel
  env, the agent whose turn it is in an AEC game; empty at the episode's end. Its space is an
  :class:`AgentDict`, so the env managers' shared memory and checks take it as they take any
  observation. PettingZoo's per-agent observation stays as it is (e.g. the board games'
  ``{'observation': planes, 'action_mask': legal moves}``, int8).
- ``step(actions)`` takes ``{agent: action}`` for exactly those agents (an action the mask forbids
  is refused with one line naming the legal ones).
- ``reward``: ``{agent: reward}`` of each agent whose transition ended in this step: it acted
  before and now acts again or has left. In an AEC game this is the sum of what the agent
  received since its own last move (PettingZoo's ``last()``), so the other players' moves in
  between are part of its transition.
- ``done``: the episode is over for every agent.
- ``info['agents']``: ``{agent: {'terminated', 'truncated', 'final_obs', 'eval_episode_return'}}``
  for each agent that left in this step (terminated and truncated kept apart: TD targets
  bootstrap on truncation only); at ``done`` also ``info['eval_episode_return']`` ``{agent: return}``.

A fixed ``opponent`` (registered by name: ``'random'``, ``'win_block'``, the board games' rules in
``stride.zoo.pettingzoo.board_rules``) plays
``opponent_agent`` inside this env, so the learner sees only its own turns. A ``matchmaker`` (the
self-play league, ``stride.league.League``) instead picks each episode's opponent and its seat at
reset -- a frozen league player, a fixed opponent, or none (self-play: the learner plays every
seat) -- and is told the learner's returns at the episode's end; the opponent is stepped through
the same ``act(obs, rng)`` call either way, and the learner's agents are then all agents (each
episode, those the opponent does not play).

Workers consume one observation per env id: :class:`~stride.envs.env_manager.MultiAgentManager`
presents each (env, agent) as its own env id; the entries wrap a manager of this env in it
(``agent_keyed``). Better than the peers on purpose: Tianshou's ``PettingZooEnv`` supports AEC
only and folds every agent's reward into one vector per step, and DI-engine's ``PettingZooEnv``
supports parallel MPE only, stacking agents into one array (no agents that leave, no masks
per turn); here both APIs, masks, per-agent leaving and per-agent termination/truncation hold.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, List, Mapping, Optional, Set, SupportsFloat, Tuple, Union, cast

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ..config.setting import Setting
from ..config.view import declared, setting
from ..utils.errors import ConfigError, InvalidActionError, StrideError
from ..utils.extras import MissingExtraError, import_extra, install_hint
from ..utils.narrow import as_int
from ..utils.registry import ENV_REGISTRY
from .agent_dict import AgentDict
from .base_env import BaseEnv, BaseEnvTimestep, EnvConfig
from .opponents import Matchmaker, Opponent, get_opponent, opponent_names
from .sample_transforms import SampleTransform, get_sample_transform

#: a PettingZoo env object (``pettingzoo.AECEnv`` or ``pettingzoo.ParallelEnv``) or a zero-argument factory of one
EnvOrFactory = Union[object, Callable[[], object]]
#: one agent's observation as PettingZoo gives it: an array, or a dict of arrays (``{'observation', 'action_mask'}``)
AgentObs = Union[npt.NDArray[np.generic], Dict[str, npt.NDArray[np.generic]]]


def _pettingzoo() -> Any:
    return import_extra("pettingzoo", "multiagent", what="PettingZoo envs")


def make_pettingzoo(env_id: str, env_kwargs: Mapping[str, object], api: str) -> object:
    """The env of module ``env_id`` (``'pettingzoo.classic.tictactoe_v3'``, ``'mpe2.simple_spread_v3'``):
    its ``parallel_env(**env_kwargs)`` (``api='parallel'``, or ``'auto'`` where the module has one),
    else its AEC ``env(**env_kwargs)``."""
    _pettingzoo()
    root = env_id.split(".")[0]
    if importlib.util.find_spec(root) is None:
        import_extra(root, "multiagent", what=f"the PettingZoo envs of '{root}'")
    try:
        module = importlib.import_module(env_id)
    except ModuleNotFoundError as e:
        missing = e.name or env_id
        if missing != env_id and not env_id.startswith(missing + "."):  # the env is there, a dependency is not
            raise MissingExtraError(f"PettingZoo env '{env_id}' needs {missing}, which is not installed: "
                                    f"{install_hint('multiagent')} (the board games and MPE; other "
                                    f"families: PettingZoo's extras, e.g. pip install 'pettingzoo[classic]')") from None
        raise ConfigError(f"env_id '{env_id}' is not a PettingZoo env module; write it like "
                          f"'pettingzoo.classic.tictactoe_v3' or 'mpe2.simple_spread_v3'") from None
    has_parallel, has_aec = hasattr(module, "parallel_env"), hasattr(module, "env")
    if api == "parallel" and not has_parallel:
        raise ConfigError(f"PettingZoo env '{env_id}' has no parallel API (api='parallel'); use api='aec' or 'auto'")
    if api == "aec" and not has_aec or not (has_parallel or has_aec):
        raise ConfigError(f"PettingZoo env '{env_id}' has no AEC env() (api={api!r}); use api='parallel' or 'auto'")
    make = module.parallel_env if has_parallel and api in ("parallel", "auto") else module.env
    env: object = make(**dict(env_kwargs))
    return env


class OpponentName(Setting):
    """A fixed opponent's registered name, or None: the choices are looked up when a value is
    checked or described (the built-ins and a user's opponents register after this module loads)."""

    def describe(self) -> str:
        self.choices = tuple(opponent_names())
        return super().describe()

    def check(self, dotted: str, value: object) -> None:
        self.choices = tuple(opponent_names())
        super().check(dotted, value)


@dataclass(frozen=True)
class PettingZooConfig(EnvConfig):
    """``env`` of a :class:`PettingZooEnv`."""

    #: (str) the env's module: 'pettingzoo.classic.tictactoe_v3', 'mpe2.simple_spread_v3', ...
    env_id: Optional[str] = None
    #: (dict) keyword arguments of the module's env() / parallel_env() (e.g. max_cycles=25, N=3).
    env_kwargs: Mapping[str, object] = declared({})
    #: (str) 'auto': the parallel API where the module has one, else AEC.
    api: str = setting("auto", ("auto", "parallel", "aec"))
    #: (str|None) a fixed opponent played inside the env: 'random' or 'win_block'.
    opponent: Optional[str] = setting(OpponentName(None, ()))
    #: (str|None) the agent the opponent plays (None: the last of possible_agents).
    opponent_agent: Optional[str] = None
    #: (int) turn-based (AEC) games only: each episode starts after k uniformly random legal moves,
    #: k drawn from 0..opening_plies by the episode's seed (0: every game from the initial position).
    opening_plies: int = setting(0, "[0, inf)")
    #: (bool) board games, off-policy learners: the collector also returns each sample mirrored
    #: left-right (the sample transform 'board_mirror'), 2 x the samples for the same env steps.
    mirror: bool = False


@ENV_REGISTRY.register("pettingzoo")
class PettingZooEnv(BaseEnv[Dict[str, AgentObs], Dict[str, object]]):
    """Wrap ``env_or_factory`` (an AEC or parallel PettingZoo env, or a factory of one; None: made
    from ``cfg.env_id``). See the module docstring for what a step holds."""

    #: observations, rewards and actions are dicts keyed by agent: managers of this env are
    #: presented to the workers one env id per agent (MultiAgentManager)
    agent_keyed: ClassVar[bool] = True
    config_view = PettingZooConfig
    _typed: PettingZooConfig

    @classmethod
    def sample_transforms(cls, cfg: Mapping[str, object]) -> List[SampleTransform]:
        """``mirror=True``: the board games' left-right mirror (``'board_mirror'``)."""
        return [get_sample_transform("board_mirror")] if cfg.get("mirror") else []

    def __init__(self, env_or_factory: Optional[EnvOrFactory] = None, cfg: Optional[Mapping[str, object]] = None,
                 matchmaker: Optional[Matchmaker] = None) -> None:
        super().__init__(cfg)
        if matchmaker is not None and self._typed.opponent is not None:
            raise ConfigError(f"PettingZooEnv takes a fixed opponent (opponent={self._typed.opponent!r}) or a "
                              f"matchmaker that picks one per episode, not both; set opponent=None")
        self._matchmaker = matchmaker
        self._episode_seed: Optional[int] = None
        if env_or_factory is None:
            env_id = self._typed.env_id
            if not isinstance(env_id, str):
                raise ConfigError(f"PettingZooEnv needs a PettingZoo env, a factory of one, or env_id "
                                  f"(a module like 'pettingzoo.classic.tictactoe_v3'), got env_id={env_id!r}")
        self._source = env_or_factory
        self._env: Any = None
        self._parallel = False
        self._opponent: Optional[Opponent] = None
        self._opponent_agents: Set[str] = set()
        self._agents: List[str] = []  # the agents the learner plays
        self._spaces: Optional[Tuple[AgentDict, gym.spaces.Dict]] = None
        self._rng = np.random.default_rng()
        self._ready: Dict[str, AgentObs] = {}
        self._pending: Set[str] = set()  # agents that acted and wait for their transition's end
        self._returns: Dict[str, float] = {}
        self._last_obs: Dict[str, Any] = {}  # every agent's latest observation (the parallel opponents')

    # ---- making --------------------------------------------------------------------------------
    def _make(self) -> Any:
        if self._env is not None:
            return self._env
        source = self._source
        if source is None:
            kwargs: object = self._typed.env_kwargs or {}  # (an env built directly: as given)
            if not isinstance(kwargs, Mapping):
                raise ConfigError(f"env_kwargs must be a dict of keyword arguments, got {kwargs!r}")
            env: Any = make_pettingzoo(str(self._typed.env_id), kwargs, self._typed.api)
        else:
            env = source() if callable(source) and not hasattr(source, "possible_agents") else source
        pz = _pettingzoo()
        if isinstance(env, pz.ParallelEnv):
            self._parallel = True
        elif not isinstance(env, pz.AECEnv):
            raise ConfigError(f"PettingZooEnv wraps a pettingzoo.AECEnv or ParallelEnv, got {type(env).__name__}")
        self._env = env
        self._read_agents(env)
        if self._opening_plies() and self._parallel:
            raise ConfigError(f"opening_plies={self._opening_plies()} plays random moves of a turn-based game; "
                              f"{self.env_id} is a parallel env: valid choices: opening_plies=0")
        return env

    def _opening_plies(self) -> int:
        """``cfg.opening_plies``, checked."""
        most = as_int(self._typed.opening_plies or 0, "opening_plies")  # (an env built directly: as given)
        if most < 0:
            raise ConfigError(f"opening_plies={most}: valid choices: a whole number >= 0 (0: no random opening)")
        return most

    def _read_agents(self, env: Any) -> None:
        agents = [str(a) for a in env.possible_agents]
        opponent = self._typed.opponent
        if opponent is not None:
            self._opponent = get_opponent(str(opponent))
            chosen = self._typed.opponent_agent or agents[-1]
            if chosen not in agents:
                raise ConfigError(f"opponent_agent {chosen!r} is not an agent of {self.env_id}; valid choices: {', '.join(agents)}")
            self._opponent_agents = {str(chosen)}
        self._agents = [a for a in agents if a not in self._opponent_agents]  # with a matchmaker: every agent
        self._spaces = (AgentDict({a: env.observation_space(a) for a in self._agents}),
                        gym.spaces.Dict({a: env.action_space(a) for a in self._agents}))

    @property
    def observation_space(self) -> AgentDict:  # type: ignore[override]
        self._make()
        assert self._spaces is not None  # _make read them
        return self._spaces[0]

    @property
    def action_space(self) -> gym.spaces.Dict:  # type: ignore[override]
        self._make()
        assert self._spaces is not None  # _make read them
        return self._spaces[1]

    @property
    def agents(self) -> List[str]:
        """The agents the learner plays (``possible_agents`` less the opponent's), in PettingZoo's order."""
        self._make()
        return list(self._agents)

    @property
    def env_id(self) -> str:
        """The env's module (``cfg.env_id``), else its ``metadata['name']`` or class name (for messages)."""
        if isinstance(self._typed.env_id, str):
            return self._typed.env_id
        env = self._env if self._env is not None else self._source
        name = getattr(env, "metadata", {}).get("name") if env is not None else None
        return str(name) if name else type(env).__name__

    # ---- episode -------------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, **kwargs: object) -> Dict[str, AgentObs]:  # type: ignore[override]
        env = self._make()
        if seed is None:
            seed = self.next_episode_seed()
        # the opponent's draws follow the episode seed: a replayed episode is the same episode
        self._rng = np.random.default_rng(seed)
        self._pending, self._ready = set(), {}
        if self._matchmaker is not None:
            self._match(seed)
        self._returns = dict.fromkeys([a for a in self._agents if a not in self._opponent_agents], 0.0)
        if self._parallel:
            obs, _ = env.reset(seed=seed)
            self._last_obs = dict(obs)
            self._ready = {a: obs[a] for a in env.agents if a not in self._opponent_agents}
            if not self._ready:  # only opponents act first: play them until a learner's agent is on
                self._play_parallel({})
        else:
            env.reset(seed=seed)
            self._play_opening(env, seed)
            self._last_obs = {}
            self._advance({}, {})
        return dict(self._ready)

    def _play_opening(self, env: Any, seed: Optional[int]) -> None:
        """``cfg.opening_plies``: k random legal moves (k from 0..opening_plies, both drawn from the
        episode's RNG) before anyone plays; an opening move that would end the game is not played
        (the game is replayed to the move before it), so every episode is a game still to decide."""
        most = self._opening_plies()
        if most == 0:
            return
        played: List[int] = []
        for _ in range(int(self._rng.integers(0, most + 1))):
            obs = env.observe(env.agent_selection)
            if not (isinstance(obs, Mapping) and "action_mask" in obs):
                raise ConfigError(f"opening_plies={most} needs observations with an 'action_mask' (PettingZoo's "
                                  f"board games), {self.env_id} has none; valid choices: opening_plies=0")
            played.append(int(self._rng.choice(np.flatnonzero(obs["action_mask"]))))
            env.step(played[-1])
            if any(env.terminations.values()) or any(env.truncations.values()):
                env.reset(seed=seed)
                for action in played[:-1]:
                    env.step(action)
                return

    def _match(self, seed: Optional[int]) -> None:
        """This episode's opponent and seat, from the matchmaker."""
        assert self._matchmaker is not None  # only called with one
        if seed is None:
            raise ConfigError(f"{self.env_id}: a matchmaker needs seeded episodes (seed the env manager)")
        self._episode_seed = int(seed)
        chosen = self._matchmaker.match(int(seed), list(self._agents))
        if chosen is None:
            self._opponent, self._opponent_agents = None, set()
            return
        seat, act = chosen
        if seat not in self._agents:
            raise ConfigError(f"the matchmaker chose seat {seat!r}, not an agent of {self.env_id}; "
                              f"valid choices: {', '.join(self._agents)}")
        self._opponent, self._opponent_agents = act, {seat}

    def step(self, action: Mapping[str, object]) -> BaseEnvTimestep[Dict[str, AgentObs]]:  # type: ignore[override]
        if self._env is None or not (self._ready or self._pending):
            raise StrideError(f"{self.env_id}: step() before reset() or after the episode ended")
        actions = self._check_actions(action)
        self._pending.update(actions)
        self._ready = {}
        rewards: Dict[str, float] = {}
        ended: Dict[str, Dict[str, object]] = {}
        if self._parallel:
            rewards, ended = self._play_parallel(actions)
        else:
            self._env.step(actions[next(iter(actions))])
            self._advance(rewards, ended)
        done = not self._ready and not self._pending
        info: Dict[str, object] = {"agents": ended}
        if done:
            info["eval_episode_return"] = dict(self._returns)
            flags = list(ended.values())
            info["terminated"] = bool(flags) and all(bool(f["terminated"]) for f in flags)
            info["truncated"] = not info["terminated"] and any(bool(f["truncated"]) for f in flags)
            if self._matchmaker is not None and self._episode_seed is not None:
                self._matchmaker.result(self._episode_seed, dict(self._returns))
        # the per-agent reward dict is what this env's timesteps carry (the agent-keyed contract; the
        # manager's checks take a dict reward for an AgentDict space)
        return BaseEnvTimestep(dict(self._ready), cast(SupportsFloat, rewards), done, info)

    def _check_actions(self, action: Mapping[str, Any]) -> Dict[str, Any]:
        """``action`` for exactly the ready agents, each in its space and allowed by its mask."""
        if not isinstance(action, Mapping) or set(action) != set(self._ready):
            got = sorted(map(str, action)) if isinstance(action, Mapping) else type(action).__name__
            raise InvalidActionError(f"{self.env_id}: actions for {got!r}, but the agents to act are {sorted(self._ready)}")
        out: Dict[str, Any] = {}
        for agent, a in action.items():
            space = self.action_space[agent]
            if isinstance(space, gym.spaces.Discrete):
                legal = self._legal(agent, space)
                a_int = int(a) if isinstance(a, (int, np.integer)) or (np.ndim(a) == 0 and np.asarray(a).dtype.kind in "iu") else None
                if a_int is None or a_int not in legal:
                    raise InvalidActionError(f"{self.env_id}: action {a!r} of {agent!r} is not legal now; "
                                             f"legal actions: {sorted(legal)}")
                out[agent] = a_int
            elif space.contains(a):
                out[agent] = a
            else:
                raise InvalidActionError(f"{self.env_id}: action {a!r} of {agent!r} is outside its action space {space}")
        return out

    def _legal(self, agent: str, space: gym.spaces.Discrete) -> Set[int]:
        obs = self._ready[agent]
        start = int(space.start)
        if isinstance(obs, Mapping) and "action_mask" in obs:
            return {start + int(i) for i in np.flatnonzero(obs["action_mask"])}
        return set(range(start, start + int(space.n)))

    def _play_parallel(self, actions: Dict[str, Any]) -> Tuple[Dict[str, float], Dict[str, Dict[str, object]]]:
        """One parallel step (the opponents' actions added), then more while only opponents are live."""
        env = self._env
        rewards: Dict[str, float] = {}
        ended: Dict[str, Dict[str, object]] = {}
        while True:
            joint = dict(actions)
            for agent in [a for a in env.agents if a in self._opponent_agents]:
                joint[agent] = self._opponent_action(self._last_obs.get(agent))
            obs, rew, term, trunc, _ = env.step(joint)
            self._last_obs.update(obs)
            for agent in [a for a in rew if a in self._pending]:
                r = float(rew[agent])
                self._returns[agent] += r
                rewards[agent] = rewards.get(agent, 0.0) + r
                if term.get(agent) or trunc.get(agent):
                    ended[agent] = self._end(agent, obs.get(agent), bool(term.get(agent)), bool(trunc.get(agent)))
            self._ready = {a: obs[a] for a in env.agents if a not in self._opponent_agents}
            if not env.agents:
                self._close_dropped(rewards, ended)
            if self._ready or not env.agents:
                return rewards, ended
            actions = {}

    def _advance(self, rewards: Dict[str, float], ended: Dict[str, Dict[str, object]]) -> None:
        """Run an AEC game until one of the learner's agents must act or the game is over: ends
        (``last()``'s reward: everything since the agent's own move) the transitions of the agents
        whose turn comes, steps dead agents with None, and plays the opponent's turns."""
        env = self._env
        while env.agents:
            agent = env.agent_selection
            obs, reward, terminated, truncated, _ = env.last()
            if agent not in self._opponent_agents:
                self._returns[agent] += float(reward)
                if agent in self._pending:
                    rewards[agent] = float(reward)
                    if not (terminated or truncated):
                        self._pending.discard(agent)
            if terminated or truncated:
                if agent in self._pending:
                    ended[agent] = self._end(agent, obs, bool(terminated), bool(truncated))
                env.step(None)
            elif agent in self._opponent_agents:
                env.step(self._opponent_action(obs))
            else:
                self._ready = {agent: obs}
                self._last_obs[agent] = obs
                return
        self._close_dropped(rewards, ended)

    def _close_dropped(self, rewards: Dict[str, float], ended: Dict[str, Dict[str, object]]) -> None:
        """The game is over but some agents' transitions never ended (an env that removed them
        without a termination flag or an AEC dead step): end them as terminated at their last observation."""
        for agent in sorted(self._pending):
            rewards.setdefault(agent, 0.0)
            ended[agent] = self._end(agent, self._last_obs.get(agent), True, False)

    def _end(self, agent: str, obs: object, terminated: bool, truncated: bool) -> Dict[str, object]:
        """An agent's transition stream ends: its final observation, why, and its return."""
        self._pending.discard(agent)
        return {"terminated": terminated, "truncated": truncated and not terminated, "final_obs": obs,
                "eval_episode_return": self._returns[agent]}

    def _opponent_action(self, obs: Any) -> int:
        assert self._opponent is not None  # only opponent agents come here
        if not (isinstance(obs, Mapping) and "action_mask" in obs):
            raise ConfigError(f"opponent {self._typed.opponent!r} needs observations with an 'action_mask' "
                              f"(PettingZoo's board games), {self.env_id} has none")
        return self._opponent(obs, self._rng)

    def random_action(self) -> Dict[str, object]:
        """A uniformly random legal action for every agent to act."""
        out: Dict[str, object] = {}
        for agent in self._ready:
            space = self.action_space[agent]
            out[agent] = (int(self._rng.choice(sorted(self._legal(agent, space))))
                          if isinstance(space, gym.spaces.Discrete) else space.sample())
        return out

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            if self._source is None or (callable(self._source) and not hasattr(self._source, "possible_agents")):
                self._env = None  # made here: made again on next use
        self._ready, self._pending = {}, set()

    def __repr__(self) -> str:
        return f"PettingZooEnv({self.env_id})"
