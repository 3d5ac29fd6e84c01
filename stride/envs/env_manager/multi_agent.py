"""``MultiAgentManager``: each (env, agent) of a manager of agent-keyed envs as its own env id.

Parameter-shared independent learners with the workers unchanged: the collector, evaluator and
every policy see ``env_num = envs x agents`` single-agent envs (env id ``env * n_agents + k`` is
agent ``k`` of ``env``), each with its own transition stream, and one shared model learns from all
of them. Under it, one ordinary manager (base, subprocess, async subprocess: their shared memory,
timeouts, retries and checks unchanged) steps the real envs of :class:`~stride.envs.PettingZooEnv`:
the actions of one env's ready agents are grouped into one ``{agent: action}`` step (parallel: all
live agents; AEC: the agent whose turn it is). A transition comes back when it ends -- in an AEC
game, when the agent's turn comes again -- so between its action and its result an agent's stream
is in flight, exactly as with an asynchronous manager, which the workers already handle. An
episode that ends abnormally (a crashed, killed or hung env) is closed as abnormal for every agent
with a transition in flight: nothing is stitched to the next episode.

Why this design: DI-engine's multi-agent envs stack all agents into one observation array per env
(fixed agent count, no leaving agents, no turns: AEC games do not fit), and its multi-agent
policies are separate classes; Tianshou's ``MultiAgentPolicyManager`` routes each agent's slice of
one batch to its own policy inside the policy layer (AEC only); RLlib's multi-agent dict API
threads ``{agent: ...}`` dicts through env runners, connectors and episodes. Here the agent
dimension is resolved once, at the env-manager boundary, so every existing policy and worker is a
parameter-shared multi-agent learner without a line of multi-agent code.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

import gymnasium as gym

from ...utils.errors import ConfigError, StrideError
from ..agent_dict import AgentDict
from ..base_env import BaseEnvTimestep
from .base import BaseEnvManager


class MultiAgentManager:
    """Present ``manager`` (of envs with :class:`AgentDict` observations) one env id per (env, agent).

    Has the env manager contract of ``shared/API.md`` (``env_num``, ``ready_obs``, ``step``,
    ``launch``, ``reset``, ``seed``, ``close``, ``state_dict``...). Every agent needs the same
    observation and action space (one shared model). The ready agents of one env act together:
    an action for some of them only is refused (evaluators: ``n_evaluator_episode`` a multiple of
    the number of agents keeps every agent of an env on the same quota).
    """

    def __init__(self, manager: BaseEnvManager) -> None:
        space = manager.observation_space
        if not isinstance(space, AgentDict):
            raise ConfigError(f"MultiAgentManager needs envs with an AgentDict observation space, got {space}")
        self._manager = manager
        self._agents: List[str] = list(space.spaces)
        self._index = {agent: k for k, agent in enumerate(self._agents)}
        self._obs_space = self._shared_space("observation", space.spaces)
        act = manager.action_space
        if not isinstance(act, gym.spaces.Dict):
            raise ConfigError(f"MultiAgentManager needs envs with a Dict action space keyed by agent, got {act}")
        self._act_space = self._shared_space("action", act.spaces)
        self._ready: Dict[int, object] = {}
        self._inflight: Dict[int, Set[str]] = {}  # env -> agents whose transition has not come back

    def _shared_space(self, what: str, spaces: Mapping[str, gym.spaces.Space[Any]]) -> gym.spaces.Space[Any]:
        """The one space every agent has (a shared model needs one), else a one-line error."""
        first = self._agents[0]
        for agent in self._agents[1:]:
            if spaces[agent] != spaces[first]:
                raise ConfigError(f"parameter-shared agents need one {what} space: agent {first!r} has "
                                  f"{spaces[first]}, agent {agent!r} has {spaces[agent]}")
        return spaces[first]

    # ---- ids -------------------------------------------------------------------------------
    @property
    def agents(self) -> List[str]:
        """The agents of each env; agent ``k`` of env ``e`` is env id ``e * len(agents) + k``."""
        return list(self._agents)

    def env_and_agent(self, env_id: int) -> Tuple[int, str]:
        """The real env and the agent behind ``env_id``."""
        env, k = divmod(env_id, len(self._agents))
        return env, self._agents[k]

    def _vid(self, env: int, agent: str) -> int:
        return env * len(self._agents) + self._index[agent]

    def _refresh(self) -> None:
        """``ready_obs`` from the real manager's: one entry per ready agent."""
        n = len(self._agents)
        index = self._index
        # (an ignore, not a cast: the step path) the real envs' observations are {agent: observation}
        self._ready = {e * n + index[agent]: o for e, obs in self._manager.ready_obs.items()
                       for agent, o in obs.items()}  # type: ignore[attr-defined]

    # ---- the manager contract -----------------------------------------------------------------
    @property
    def env_num(self) -> int:
        return self._manager.env_num * len(self._agents)

    @property
    def ready_obs(self) -> Dict[int, object]:
        """``{env_id: observation}`` of the agents waiting for an action."""
        return self._ready

    @property
    def ready_obs_id(self) -> List[int]:
        return list(self._ready)

    @property
    def closed(self) -> bool:
        return self._manager.closed

    @property
    def done(self) -> bool:
        return self._manager.done

    @property
    def nonfinite_dropped(self) -> int:
        return self._manager.nonfinite_dropped

    @property
    def observation_space(self) -> gym.spaces.Space[object]:
        """One agent's observation space (the same for every agent)."""
        return self._obs_space

    @property
    def action_space(self) -> gym.spaces.Space[object]:
        """One agent's action space (the same for every agent)."""
        return self._act_space

    @property
    def reward_space(self) -> gym.spaces.Box:
        return self._manager.reward_space

    def episode_seed(self, env_id: int) -> Optional[int]:
        """The reset seed of the episode in flight of the real env behind ``env_id``."""
        return self._manager.episode_seed(self.env_and_agent(env_id)[0])

    def seed(self, seed: Optional[int], dynamic_seed: bool = True) -> None:
        self._manager.seed(seed, dynamic_seed)

    def _real_params(self, reset_param: Optional[Mapping[int, Mapping[str, object]]]) -> Optional[Dict[int, Mapping[str, object]]]:
        """Reset kwargs by env id -> by real env (the agents of one env share its reset)."""
        if reset_param is None:
            return None
        return {divmod(i, len(self._agents))[0]: p for i, p in reset_param.items()}

    def launch(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
        self._manager.launch(self._real_params(reset_param))
        self._inflight = {}
        self._refresh()

    def reset(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
        real = self._real_params(reset_param)
        self._manager.reset(real)
        for e in real if real is not None else list(self._inflight):
            self._inflight.pop(e, None)
        self._refresh()

    def step(self, actions: Mapping[int, object]) -> Dict[int, BaseEnvTimestep[object]]:
        """Step the envs of the given agents (one ``{agent: action}`` step per env); the timesteps of
        the agents whose transitions ended, by env id."""
        if self._manager.closed:
            raise StrideError("env manager is closed; call launch() first")
        grouped: Dict[int, Dict[str, object]] = {}
        for vid, action in actions.items():
            if vid not in self._ready:
                raise StrideError(f"env {vid} is not ready (ready envs: {sorted(self._ready)})")
            env, agent = self.env_and_agent(vid)
            grouped.setdefault(env, {})[agent] = action
        real_ready: Mapping[int, Mapping[str, object]] = self._manager.ready_obs  # type: ignore[assignment]  # {agent: obs}
        for env, acts in grouped.items():
            missing = sorted(set(real_ready[env]) - set(acts))
            if missing:
                raise StrideError(f"env {env}: agents {missing} got no action while {sorted(acts)} did; the ready agents "
                                  f"of one env act together (evaluators: make n_evaluator_episode a multiple of "
                                  f"{len(self._agents)}, the number of agents)")
        before = {env: set(agents) for env, agents in self._inflight.items()}
        for env, acts in grouped.items():
            self._inflight.setdefault(env, set()).update(acts)
        try:
            results = self._manager.step(grouped)
        except BaseException:  # nothing was stepped (a refused action): nothing is in flight
            self._inflight = before
            raise
        out: Dict[int, BaseEnvTimestep[object]] = {}
        for env, ts in results.items():
            self._split(env, ts, out)
        self._refresh()
        return out

    def _split(self, env: int, ts: BaseEnvTimestep[Any], out: Dict[int, BaseEnvTimestep[object]]) -> None:
        """One real timestep -> a timestep per agent whose transition ended (or all in flight, abnormal)."""
        inflight = self._inflight.setdefault(env, set())
        if ts.info.get("abnormal"):  # the episode is lost for every agent in it
            for agent in sorted(inflight, key=self._index.__getitem__):
                out[self._vid(env, agent)] = BaseEnvTimestep(None, 0.0, True, dict(ts.info))
            inflight.clear()
            return
        rewards: Mapping[str, Any] = ts.reward  # type: ignore[assignment]  # agent-keyed envs give {agent: reward}
        ended: Mapping[str, Mapping[str, object]] = ts.info["agents"]  # type: ignore[assignment]
        obs: Mapping[str, Any] = ts.obs
        for agent, reward in rewards.items():
            inflight.discard(agent)
            end = ended.get(agent)
            if end is None:
                out[self._vid(env, agent)] = BaseEnvTimestep(obs[agent], reward, False, {})
            else:
                info = {k: v for k, v in end.items() if k != "final_obs"}
                out[self._vid(env, agent)] = BaseEnvTimestep(end["final_obs"], reward, True, info)

    def random_action(self) -> Dict[int, object]:
        """A random (legal) action for every ready agent."""
        actions: Mapping[int, Mapping[str, object]] = self._manager.random_action()  # type: ignore[assignment]  # {agent: action}
        return {self._vid(e, agent): a for e, acts in actions.items() for agent, a in acts.items()}

    def enable_save_replay(self, replay_path: str) -> None:
        self._manager.enable_save_replay(replay_path)

    def close(self) -> None:
        self._manager.close()
        self._ready = {}
        self._inflight = {}

    # ---- exact resume ----------------------------------------------------------------------
    def state_dict(self) -> Dict[str, object]:
        """The real manager's state and which agents have a transition in flight."""
        return {"manager": self._manager.state_dict(),
                "inflight": {str(e): sorted(a) for e, a in self._inflight.items() if a}}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        manager, inflight = state["manager"], state["inflight"]
        if not isinstance(manager, Mapping) or not isinstance(inflight, Mapping):
            raise StrideError(f"not a MultiAgentManager state_dict (keys {sorted(state)})")
        self._manager.load_state_dict(manager)
        self._inflight = {int(e): {str(a) for a in agents} for e, agents in inflight.items()}
        self._refresh()

    def __repr__(self) -> str:
        return f"MultiAgentManager({type(self._manager).__name__}, agents={self._agents})"
