"""What the entries share: reading config files, building env managers, the interrupt flag."""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import os
import pkgutil
import signal
import sys
from functools import partial
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

import gymnasium as gym
import numpy as np
import torch

from ..config import Config
from ..config.compile import env_kwargs, fill_action_range
from ..policy.action_range import parse_action_range
from ..policy.base_policy import Policy
from ..envs import BaseEnv, BaseEnvManager, MultiAgentManager, create_env_manager
from ..envs.sample_transforms import SampleTransform
from ..utils.errors import ConfigError, unknown_name_message
from ..utils.registry import ENV_REGISTRY, POLICY_REGISTRY



#: a config as the entries take it: ``[main_config, create_config]`` (or a tuple), or a config file's path
ConfigPair = Tuple[Dict[str, object], Dict[str, object]]
ConfigInput = Union[str, ConfigPair, List[Dict[str, object]]]
#: what the entries hand the workers: a manager, or (agent-keyed envs) one env id per (env, agent) over one
AnyEnvManager = Union[BaseEnvManager, MultiAgentManager]


def read_config(path: str) -> ConfigPair:
    """Execute a config ``.py`` file and return its ``main_config`` and ``create_config``.

    The file is Python and runs: only use config files you trust (resume reads JSON instead).
    """
    parts = read_config_file(path)
    return parts["main_config"], parts["create_config"]


def read_config_file(path: str) -> Dict[str, Dict[str, object]]:
    """Execute a config ``.py`` file once: its ``main_config`` and ``create_config`` (required) and
    ``system_config`` (the parallel pipeline's, optional), by name."""
    if not os.path.exists(path):
        raise ConfigError(f"config file '{path}' does not exist")
    if not os.path.isfile(path):
        raise ConfigError(f"config file '{path}' is not a file (give a .py file defining main_config and create_config)")
    loader = importlib.machinery.SourceFileLoader("_stride_user_config", path)  # any file name, not only *.py
    spec = importlib.util.spec_from_loader(loader.name, loader)
    if spec is None:  # pragma: no cover  (a SourceFileLoader always gives a spec)
        raise ConfigError(f"config file '{path}' cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    try:
        loader.exec_module(module)
    except SyntaxError as e:
        raise ConfigError(f"config file '{path}' is not valid Python (line {e.lineno}: {e.msg})") from None
    except Exception as e:  # the user's code raised
        reason = " ".join(str(e).split())
        raise ConfigError(f"config file '{path}' failed to run: {type(e).__name__}: {reason}") from None
    missing = [n for n in ("main_config", "create_config") if not hasattr(module, n)]
    if missing:
        raise ConfigError(f"config file '{path}' must define main_config and create_config (missing: {', '.join(missing)})")
    names = [n for n in ("main_config", "create_config", "system_config") if hasattr(module, n)]
    for name in names:
        if not isinstance(getattr(module, name), dict):
            raise ConfigError(f"config file '{path}': {name} must be a dict, got {type(getattr(module, name)).__name__}")
    return {name: getattr(module, name) for name in names}


#: the zoo sits above the entries (its configs run them), so the entries find it by name only
ZOO_PACKAGE = "stride.zoo"


def _submodules(package: str) -> List[pkgutil.ModuleInfo]:
    """The modules directly inside ``package``, found by name (nothing of them is imported)."""
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:  # a parent package is missing
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return list(pkgutil.iter_modules(spec.submodule_search_locations))


def _zoo_index() -> Dict[str, Dict[str, str]]:
    """``{env: {policy: config module}}`` over every ``stride.zoo.<family>.config.<env>_<policy>_config``.

    A family holds the configs of one or more envs (``stride.zoo.mujoco``: ``halfcheetah_sac``,
    ``hopper_sac``; ``stride.zoo.minatar``: ``minatar_breakout_dqn``): a file's name splits before
    its first part that names a registered policy (``cartpole_dqn_per`` -> env ``cartpole``,
    policy ``dqn_per``), so no family has to list its envs."""
    policies = set(POLICY_REGISTRY.names())
    index: Dict[str, Dict[str, str]] = {}
    suffix = "_config"
    for family in (m.name for m in _submodules(ZOO_PACKAGE) if m.ispkg):
        package = f"{ZOO_PACKAGE}.{family}.config"
        for m in _submodules(package):
            if not m.name.endswith(suffix):
                continue
            parts = m.name[:-len(suffix)].split("_")
            k = next((k for k in range(1, len(parts)) if parts[k] in policies), None)
            if k is not None:
                index.setdefault("_".join(parts[:k]), {}).setdefault("_".join(parts[k:]), f"{package}.{m.name}")
    return index


def zoo_envs() -> List[str]:
    """The envs of the zoo: the ``<env>`` of its ``stride.zoo.<family>.config.<env>_<policy>_config`` files."""
    return sorted(_zoo_index())


def zoo_policies(env: str) -> List[str]:
    """The policies the zoo has a config for on ``env`` (``<env>_<policy>_config.py``)."""
    return sorted(_zoo_index().get(env, {}))


def zoo_config(env: str, policy: str) -> ConfigPair:
    """``stride.zoo.<family>.config.<env>_<policy>_config`` -> (main_config, create_config)."""
    index = _zoo_index()
    if env not in index:
        raise ConfigError(unknown_name_message("env", env, sorted(index)))
    policies = sorted(index[env])
    if policy not in policies:
        msg = unknown_name_message("policy", policy, policies).replace(f"'{policy}'", f"'{policy}' for env '{env}'", 1)
        raise ConfigError(msg)
    mod = importlib.import_module(index[env][policy])
    return mod.main_config, mod.create_config


def check_cuda(cfg: Config) -> None:
    """Refuse ``policy.cuda=True`` where torch sees no CUDA device, before anything is written: the
    policy would fall back to the CPU (its device choice serves mixed clusters, whose CPU-only
    collectors share the learner's config) while the saved config records ``cuda: true``. Called
    where a run's roles all live on this machine (the serial entries, a local ``-m parallel``)."""
    if cfg.policy.get("cuda") and not torch.cuda.is_available():
        raise ConfigError("policy.cuda=True but torch finds no CUDA device (torch.cuda.is_available() is False); "
                          "valid choices: policy.cuda=False (train on the CPU), or a machine with a GPU and a CUDA "
                          f"build of torch (this one is {torch.__version__})")


def build_policy(cfg: Config, model: Optional[torch.nn.Module] = None,
                 enable_field: Optional[List[str]] = None) -> Policy:
    """The policy registered as ``cfg.policy.type``, built on ``cfg.policy``."""
    policy = POLICY_REGISTRY.build(cfg.policy.type, cfg.policy, model=model, enable_field=enable_field)
    if not isinstance(policy, Policy):
        raise TypeError(f"policy '{cfg.policy.type}' built a {type(policy).__name__}, not a Policy")
    return policy


def env_factories(cfg: Config, num: int, evaluator: bool = False,
                  env_objects: Optional[Mapping[str, object]] = None) -> List[Callable[[], BaseEnv]]:
    """``num`` picklable zero-argument factories of the configured env; with ``evaluator``, the env
    class's ``evaluator_env_cfg(cfg)`` gives the evaluator's env config (e.g. Atari's whole games
    without episodic life). ``env_objects``: keyword arguments of the env class beside its config
    (objects, not settings: the league's ``matchmaker``)."""
    env_cls = ENV_REGISTRY.get(cfg.env.type)
    if not (isinstance(env_cls, type) and issubclass(env_cls, BaseEnv)):
        raise TypeError(f"env '{cfg.env.type}' is registered as {env_cls!r}, not a BaseEnv class")
    env_cfg = env_kwargs(cfg.env)
    if evaluator:
        env_cfg = env_cls.evaluator_env_cfg(env_cfg)
    return [partial(env_cls, cfg=env_cfg, **dict(env_objects or {})) for _ in range(num)]


def sample_transforms(cfg: Config) -> List[SampleTransform]:
    """What the configured env family does to its collected samples (``BaseEnv.sample_transforms``;
    PettingZoo's board games with ``env.mirror=True``: the left-right mirror): the entries hand them
    to the collector, which knows no env family."""
    env_cls = ENV_REGISTRY.get(cfg.env.type)
    if not (isinstance(env_cls, type) and issubclass(env_cls, BaseEnv)):
        raise TypeError(f"env '{cfg.env.type}' is registered as {env_cls!r}, not a BaseEnv class")
    return env_cls.sample_transforms(env_kwargs(cfg.env))


def build_env_managers(cfg: Config, seed: int) -> Tuple[AnyEnvManager, AnyEnvManager]:
    """The collector's (dynamic seeds) and the evaluator's (fixed seeds) env managers, not launched
    (each as :func:`build_env_manager` makes it)."""
    return build_env_manager(cfg, seed, evaluator=False), build_env_manager(cfg, seed, evaluator=True)


def build_env_manager(cfg: Config, seed: int, evaluator: bool = False,
                      env_objects: Optional[Mapping[str, object]] = None) -> AnyEnvManager:
    """The collector's (``env.collector_env_num`` envs, dynamic seeds) or the evaluator's
    (``env.evaluator_env_num``, fixed seeds) env manager, not launched; agent-keyed envs
    (``BaseEnv.agent_keyed``: PettingZoo's) come as a :class:`MultiAgentManager` over the configured
    manager, so the workers see one env id per (env, agent). The parallel pipeline's collector
    actors build theirs here too, each with its own seed. ``env_objects``: see :func:`env_factories`."""
    num = cfg.env.evaluator_env_num if evaluator else cfg.env.collector_env_num
    manager = create_env_manager(cfg.env.manager, env_factories(cfg, num, evaluator=evaluator, env_objects=env_objects))
    env_cls = ENV_REGISTRY.get(cfg.env.type)  # a BaseEnv class: env_factories checked it
    agent_keyed = isinstance(env_cls, type) and issubclass(env_cls, BaseEnv) and env_cls.agent_keyed
    env: AnyEnvManager = MultiAgentManager(manager) if agent_keyed else manager
    env.seed(seed, dynamic_seed=not evaluator)
    return env


def check_spaces(cfg: Config, env: AnyEnvManager) -> None:
    """What the config takes from the env's spaces, taken (a continuous policy's ``action_range``
    left None: :func:`~stride.config.compile.fill_action_range`), then checked: fail early, with
    the fix, when the model's shapes don't match them. Every entry calls it on an env manager of
    its own (not launched: the spaces build one env) before it builds its policy and saves the
    config, so the compiler never builds an env and the saved config shows the filled range."""
    model = cfg.policy.model
    act, obs = env.action_space, env.observation_space
    fill_action_range(cfg, act)
    if isinstance(act, gym.spaces.Discrete) and "action_shape" in model and model.action_shape != int(act.n):
        raise ConfigError(f"policy.model.action_shape={model.action_shape!r} does not match the env's action "
                          f"space {act}: set it to {int(act.n)}")
    if cfg.policy.get("action_range") is not None and isinstance(act, gym.spaces.Box):
        bounds = parse_action_range(cfg.policy.action_range, act.shape)
        low, high = bounds if bounds is not None else (act.low, act.high)
        if not (np.allclose(low, act.low.reshape(-1), rtol=0, atol=1e-6) and np.allclose(high, act.high.reshape(-1), rtol=0, atol=1e-6)):
            raise ConfigError(f"policy.action_range={cfg.policy.action_range!r} does not match the env's action space "
                              f"{act}: set it to None (taken from the env) or to its bounds")
    if isinstance(obs, gym.spaces.Box) and "obs_shape" in model:
        want = obs.shape[0] if len(obs.shape) == 1 else list(obs.shape)
        got = model.obs_shape
        if (list(got) if isinstance(got, (list, tuple)) else got) != want:
            raise ConfigError(f"policy.model.obs_shape={got!r} does not match the env's observation space "
                              f"{obs}: set it to {want!r}")


def probe_spaces(cfg: Config, env_objects: Optional[Mapping[str, object]] = None) -> None:
    """:func:`check_spaces` on a collector env manager made for it alone (not launched: one env is
    built and closed), for a process that steps no env of its own before it ships or saves the
    config (a league's driver on Ray, ``-m dist``'s config and roles). ``env_objects``: see
    :func:`env_factories`."""
    probe = build_env_manager(cfg, int(cfg.seed), env_objects=env_objects)
    try:
        check_spaces(cfg, probe)
    finally:
        probe.close()


class Interrupt:
    """First SIGINT (Ctrl-C) or SIGTERM (``kill``, a cluster's time limit): ask the pipeline to save
    a checkpoint and stop at the next safe point; ``signal_name`` says which came. A second one:
    stop now (``KeyboardInterrupt`` named by that signal, so the command exits 130 for Ctrl-C and
    143 for SIGTERM, as a shell's scheduler expects)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self.signal_name: Optional[str] = None
        self._previous: Dict[int, Any] = {}

    def __enter__(self) -> "Interrupt":
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt(signal.Signals(signum).name)
        self.requested = True
        self.signal_name = signal.Signals(signum).name
        print(f"\nstride: interrupt received ({self.signal_name}): saving a checkpoint and stopping "
              "(a second one aborts at once)", file=sys.stderr, flush=True)

    def __exit__(self, *exc: Any) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Inside, outside a run's loop (its build, its last writes), SIGTERM acts as Ctrl-C does: it
    raises ``KeyboardInterrupt("SIGTERM")``, so a build's provisional folder is removed and the env
    processes are closed, where SIGTERM's default action ends the process on the spot and leaves a
    folder with a config and no checkpoint (a scheduler's time limit in the first seconds of a job).
    Within the loop :class:`Interrupt` takes both signals over. Installed only in the main thread
    and where SIGTERM still has its default action: a handler of the user's own is kept."""
    import threading

    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handle(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt("SIGTERM")

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def resolve_resume(path: str) -> Tuple[str, str]:
    """An experiment folder (-> its latest checkpoint) or checkpoint file -> (experiment folder,
    checkpoint file); used by ``--resume`` and by ``-m eval``."""
    if os.path.isdir(path):
        exp_dir = path
        latest = os.path.join(exp_dir, "ckpt", "ckpt_latest.txt")
        if not os.path.isfile(latest):
            raise ConfigError(f"'{path}' holds no checkpoint (no ckpt/ckpt_latest.txt)")
        with open(latest) as f:
            ckpt = os.path.join(exp_dir, "ckpt", f.read().strip())
    elif os.path.isfile(path):
        ckpt = path
        exp_dir = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    else:
        raise ConfigError(f"path '{path}' does not exist (give an experiment folder or a checkpoint file)")
    if not os.path.isfile(os.path.join(exp_dir, "total_config.json")):
        raise ConfigError(f"'{exp_dir}' has no total_config.json (not an experiment folder of stride)")
    return exp_dir, ckpt

