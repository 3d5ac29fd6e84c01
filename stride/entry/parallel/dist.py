"""``stride -m dist``: the parallel pipeline's roles as separate processes on a running Ray cluster.

    stride -m dist --module config -p local -c cfg.py -s 0 --address HEAD:PORT   # writes ./cfg.py.json
    stride -m dist --module learner --module-name learner0 -c cfg.py.json         # on any node
    stride -m dist --module collector --module-name collector0 -c cfg.py.json     # (as many as wanted)
    stride -m dist --module coordinator -p local -c cfg.py.json                   # drives the run
    stride -m dist --module coordinator --resume RUN                              # goes on (roles started again)
    stride -m dist -c cfg.py --address HEAD:PORT -s 0                             # all roles at once
    stride -m dist --module config -p slurm -c cfg.py --address HEAD:PORT --learner-host n1 --collector-host n2 n3
    stride -m dist --module config -p k8s -c cfg.py --image IMAGE --volume-claim CLAIM    # a KubeRay RayJob (:mod:`.k8s`)

``--module config`` compiles the config (every key checked), makes the experiment folder and
writes a JSON data file (never a pickle: reading it runs no code, unlike DI-engine's ``cfg.pkl``)
that every other process reads. A ``learner`` or ``collector`` process joins the cluster, starts
its role (the classes of :mod:`.roles`, the serial workers unchanged) as a named actor
``stride/<module>/<NAME>`` (placed by Ray's default policy: the process's own node while it has
room, else another; a node affinity was tried and left actors pending on a full node), in the namespace ``stride-<experiment folder name>``, and
serves until the coordinator ends the run (it then kills the actor) or the process is stopped
(the actor is owned by the process, so it dies with it). The ``coordinator`` waits up to
``--wait`` seconds for one learner and ``system_config.collector_num`` collectors to join, starts
then with the collectors that did (at least one; one line says how many of how many; no learner
or no collector is one line naming what is missing) and runs :func:`.pipeline.train_on_ray`, the
loop of ``-m parallel``, with the replay actor it starts itself. The collectors are elastic, as
Ray's named actors are: one started later is taken in at the loop's next look
(:class:`JoinedCollectors`), one that stops or is killed has left (its batch in flight counted
lost) and is not waited for; ``result.json`` lists ``collectors_joined`` and ``collectors_left``
and counts ``batches_by_collector``. The learner and the replay stay required.

On-policy policies (PPO, A2C) take ``-m parallel``'s on-policy route of the same loop: no replay;
each unroll, tagged with its weights' version, trained on once or dropped as stale and counted
(``stale_dropped``). ``--resume RUN`` (:func:`resumed_run`) continues a run as ``-m parallel
--resume`` does, from its saved configs: Ctrl-C / SIGTERM of the coordinator saved a checkpoint
and ended the roles; with them started again from the data file, the coordinator hands the
learner the checkpoint (:meth:`~.roles.LearnerRole.resume`: weights, optimiser, counters), the
replay loads its snapshot, and a collector under a name the replay saw is renewed one incarnation
above it (:meth:`~.roles.CollectorRole.renew`), so counters and clocks go on and no batch is taken
for a duplicate.

Security: every process sets ``RAY_AUTH_MODE=token`` unless the user set a mode, and needs a token
(``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``, as Ray reads them). With
token authentication on, Ray's GCS, raylets and workers refuse every gRPC call without the
cluster's token before reading its payload, so nothing a peer without the token sends is
unpickled. RLlib and DI-engine's dist mode run without any authentication by default.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import sys
import time
import zlib
from typing import TYPE_CHECKING, Any, Collection, Dict, List, Mapping, Optional, Sequence, Tuple

from ...config import Config, compile_config, save_config
from ...config.compile import make_exp_dir
from ...policy.base_policy import Policy
from ...utils.errors import ConfigError, ResourceError, StrideError
from ...utils.files import atomic_write_text
from ...utils.narrow import as_int, as_mapping
from ...utils.registry import import_components
from ..utils import probe_spaces
from .system import compile_system_config

if TYPE_CHECKING:
    from .actors import JoinedRoles

#: the ``--module`` values
MODULES = ("config", "learner", "collector", "coordinator")
#: the ``-p`` values of ``-m dist``
PLATFORMS = ("local", "slurm", "k8s")
#: what a dist data file says it is (a file of another kind or version is refused)
FORMAT = "stride-dist-config/1"
#: seconds the coordinator waits for the roles to join (``--wait``)
WAIT_SECONDS = 120.0
#: seconds between a serving process's checks that its actor still lives
SERVE_POLL_SECONDS = 2.0


def compile_dist_config(config_file: str, seed: int, main: Mapping[str, object], create: Mapping[str, object],
                        system: Mapping[str, object], exp_name: str, out_path: Optional[str] = None) -> str:
    """Check the config, make the experiment folder (absolute path, as every node must see it) and
    write ``<config file's name>.json`` in the current directory (never next to the config: that may
    be the installed package's zoo); returns that path."""
    import_components()
    sys_cfg = compile_system_config(system)
    cfg = compile_config(dict(main), create_cfg=dict(create), seed=seed, exp_name=exp_name, save_cfg=False)
    if int(sys_cfg.learner_num) != 1:
        raise ConfigError(f"system_config.learner_num={sys_cfg.learner_num}: the --module forms of -m dist run one "
                          "learner process; valid choices: 1 (replicas: the short form -m dist -c CFG.py --address, "
                          "or -m parallel)")
    probe_spaces(cfg)  # the saved config shows what it takes from the env (the action range)
    out = out_path or f"{os.path.basename(config_file)}.json"
    exp_dir = os.path.abspath(make_exp_dir(str(cfg.exp_name)))
    data = {"format": FORMAT, "seed": int(seed), "exp_dir": exp_dir, "main_config": dict(main),
            "create_config": dict(create), "system_config": dict(sys_cfg)}
    try:
        text = json.dumps(data, indent=2, allow_nan=False)
    except (TypeError, ValueError) as e:
        os.rmdir(exp_dir)
        raise ConfigError(f"the config of '{config_file}' holds a value a data file cannot hold ({e}): "
                          "-m dist needs plain values (numbers, strings, lists, dicts, None)") from None
    cfg.exp_name = exp_dir
    save_config(cfg, exp_dir)
    atomic_write_text(out, text + "\n")
    return out


def read_dist_config(path: str) -> Tuple[Config, Config, Dict[str, object]]:
    """``(cfg, system_config, data)`` of a file ``--module config`` wrote (data only: nothing executed)."""
    data = read_dist_data(path)
    import_components()
    sys_cfg = compile_system_config(as_mapping(data["system_config"], f"{path}: 'system_config'"))
    cfg = compile_config(dict(as_mapping(data["main_config"], f"{path}: 'main_config'")),
                         create_cfg=dict(as_mapping(data["create_config"], f"{path}: 'create_config'")),
                         seed=as_int(data["seed"], f"{path}: 'seed'"), exp_name=str(data["exp_dir"]), save_cfg=False)
    probe_spaces(cfg)  # as compile_dist_config: the roles' policies act in the env's units
    return cfg, sys_cfg, data


def read_dist_data(path: str) -> Dict[str, object]:
    """The JSON object of a file ``--module config`` wrote, its format checked (nothing compiled)."""
    if not os.path.isfile(path):
        raise ConfigError(f"dist config '{path}' does not exist; make it with: stride -m dist --module config "
                          "-p local -c CONFIG.py -s 0")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"dist config '{path}' is not JSON ({type(e).__name__}); give the .json file that "
                          "--module config wrote") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"'{path}' is not a dist config of this Stride (format {FORMAT!r}); give the .json file "
                          "that stride -m dist --module config wrote")
    return data


def namespace_of(cfg: Config) -> str:
    """The Ray namespace of an experiment's named role actors."""
    return f"stride-{os.path.basename(str(cfg.exp_name))}"


def actor_name(module: str, name: str) -> str:
    return f"stride/{module}/{name}"


def collector_index(name: str) -> int:
    """A collector's index (its seeds' offset): the number that ends its name (``collector3`` -> 3),
    else a stable hash of the name, so two collectors explore differently."""
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else 10_000 + zlib.crc32(name.encode()) % 1_000_000


def check_module_name(name: Optional[str], module: str) -> str:
    if not name:
        raise ConfigError(f"--module {module} needs --module-name NAME (e.g. {module}0), unique in the run")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ConfigError(f"--module-name {name!r} must be letters, digits, '_', '.', '-' (e.g. {module}0)")
    return name


def resolve_address(address: Optional[str], sys_cfg: Config) -> str:
    """``--address``, else the config's ``system_config.address``, else ``RAY_ADDRESS``."""
    found = address or sys_cfg.get("address") or os.environ.get("RAY_ADDRESS")
    if not found or ":" not in str(found):
        raise ConfigError(f"-m dist needs the Ray cluster's head as HOST:PORT, got {found!r}: give --address "
                          "HOST:PORT (or set it with --module config --address, or RAY_ADDRESS)")
    return str(found)


def token_auth_env() -> None:
    """Token authentication on for this process's Ray client; a missing token is one line."""
    if "ray" in sys.modules and os.environ.get("RAY_AUTH_MODE") != "token":
        raise StrideError("ray was imported before -m dist set RAY_AUTH_MODE=token; set it before importing ray")
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if os.environ["RAY_AUTH_MODE"] != "token":
        raise StrideError(f"RAY_AUTH_MODE={os.environ['RAY_AUTH_MODE']!r}: -m dist runs with token authentication "
                          "only; valid choices: token (or unset)")
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser(os.path.join("~", ".ray", "auth_token"))
    if os.environ.get("RAY_AUTH_TOKEN"):
        return
    if not os.path.isfile(path):
        raise StrideError(f"no Ray auth token: set RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH to a file holding it "
                          f"(none at {path}); on the head: (umask 077; ray get-auth-token --generate)")
    check_token_file(path)


def check_token_file(path: str) -> None:
    """Refuse a token file others may read (``ray get-auth-token --generate`` writes it 0644 under
    the usual umask): whoever holds the token can run code on the cluster."""
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o077:
        raise StrideError(f"the Ray auth token file {path} is readable by others (mode {mode:04o}); whoever holds "
                          f"the token can run code on the cluster: chmod 600 {path}")


def serve_role(dist_file: str, module: str, name: str, address: Optional[str],
               wait: float = WAIT_SECONDS) -> Dict[str, object]:
    """Join the cluster, start ``module`` as the named actor ``stride/<module>/<name>`` on this node,
    serve until it ends; returns how it ended (``{"actor": ..., "ended": reason}``). Joining (the
    connection and the actor's start) takes at most ``wait`` seconds, else one line, exit 1."""
    from .cluster import joined_ray
    from .roles import CollectorRole, LearnerRole

    deadline = time.monotonic() + wait
    cfg, sys_cfg, _ = read_dist_config(dist_file)
    name = check_module_name(name, module)
    address = resolve_address(address, sys_cfg)
    token_auth_env()
    with joined_ray(address, namespace_of(cfg), deadline=deadline, wait=wait, run_dir=str(cfg.exp_name),
                    name=f"{module}-{name}"):
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError, RayError
        full = actor_name(module, name)
        if module == "learner":
            options: Dict[str, Any] = dict(num_cpus=sys_cfg.learner_cpus)
            args: Tuple[Any, ...] = (cfg,)
            cls: Any = ray.remote(LearnerRole)
        else:
            options, args = dict(num_cpus=sys_cfg.collector_cpus), (cfg, name, collector_index(name), 0)
            cls = ray.remote(CollectorRole)
        try:
            actor = cls.options(name=full, max_restarts=0, **options).remote(*args)
        except ValueError as e:  # the name is taken in this experiment's namespace
            raise ConfigError(f"--module-name {name!r}: {' '.join(str(e).split())[:300]}") from None
        try:
            pid = ray.get(actor.pid.remote(), timeout=max(0.1, deadline - time.monotonic()))
        except GetTimeoutError:
            ray.kill(actor)
            raise ResourceError(f"{full} joined namespace {namespace_of(cfg)} but its actor did not start within "
                                f"{wait:g} s (--wait): no node had room for it ({options['num_cpus']:g} CPU) or "
                                "its envs were slow to build") from None
        except RayError as e:
            raise StrideError(f"{full} failed to start: {' '.join(str(e).split())[:400]}") from None
        print(f"stride: {full} serves in namespace {namespace_of(cfg)} (actor pid {pid}); waiting for the "
              "coordinator", flush=True)
        try:
            while True:
                ray.get(actor.pid.remote())
                time.sleep(SERVE_POLL_SECONDS)
        except RayActorError as e:
            reason = "killed by the coordinator: the run ended" if "ray.kill" in str(e) else \
                " ".join(str(e).split())[:300]
            return {"actor": full, "ended": reason}
        finally:
            ray.kill(actor)


#: seconds between the coordinator's looks for collectors that joined late (at the loop's pace, at most this often)
JOIN_POLL_SECONDS = 1.0


def _joined_names(module: str) -> List[str]:
    """The names of the ``module`` actors in the current namespace (Ray's public ``list_named_actors``)."""
    from ray.util import list_named_actors

    prefix = f"stride/{module}/"
    return sorted(n[len(prefix):] for n in list_named_actors() if isinstance(n, str) and n.startswith(prefix))


class JoinedCollectors:
    """The collectors of a ``-m dist`` run, found by name in its namespace as they join: the
    coordinator's :attr:`~.coordinator.JoinedRoles.newcomers`. Ray's actors are named in a namespace
    and live as long as their process, so the set of collectors is elastic: a collector started
    late is taken in at the coordinator's next look (at most every :data:`JOIN_POLL_SECONDS`), one
    that left is not waited for. A name seen once is not taken in again (a collector restarted
    under the same name would repeat its batches' tags, which the replay's ledger refuses as
    duplicates): it is told to take a new ``--module-name``. With no collector left for ``wait``
    seconds the run stops with one line. DI-engine's dist mode needs every
    collector at start; RLlib's env runners are the driver's, never joined from elsewhere."""

    def __init__(self, namespace: str, wait: float, seen: Sequence[str]) -> None:
        self.namespace, self.wait = namespace, wait
        self.seen = set(seen)
        self._refused: set[str] = set()
        self._last = time.monotonic()
        self._alone_since: Optional[float] = None

    def __call__(self, present: Collection[str]) -> List[Tuple[Any, str, int]]:
        """The collectors that joined since the last look (``present``: the names the run has now)."""
        now = time.monotonic()
        if present:
            self._alone_since = None
        elif self._alone_since is None:
            self._alone_since = now
        elif now - self._alone_since > self.wait:
            raise ResourceError(f"every collector left and none joined namespace {self.namespace} within {self.wait:g} "
                                "s (--wait); start one: stride -m dist --module collector --module-name NAME -c "
                                "CFG.json")
        if now - self._last < JOIN_POLL_SECONDS:
            return []
        self._last = now
        import ray

        found = []
        for name in _joined_names("collector"):
            if name in present or name in self._refused:
                continue
            if name in self.seen:  # left, and joined again under its old name
                self._refused.add(name)
                print(f"stride: {actor_name('collector', name)} joined again under a name this run already had; it is "
                      "not taken in (its batches would repeat the replay's ledger): stop it and start it with a new "
                      "--module-name", file=sys.stderr, flush=True)
                continue
            try:
                found.append((ray.get_actor(actor_name("collector", name)), name, collector_index(name)))
            except ValueError:  # it left again between the two calls
                continue
            self.seen.add(name)
        return found


def find_joined_roles(timeout: float, deadline: float) -> Any:
    """A :data:`.pipeline.FindRoles` that waits until ``deadline`` (``time.monotonic()``; the
    coordinator's ``--wait`` of ``timeout`` s, its connection included) for one learner and
    ``system_config.collector_num`` collectors in the current namespace, and then starts with the
    collectors that joined (at least one; fewer: one line says how many); more are taken in as they
    join (:class:`JoinedCollectors`)."""

    def find(cfg: Config, sys_cfg: Config) -> JoinedRoles:
        import ray

        from .actors import JoinedRoles

        while True:
            learners, collectors = _joined_names("learner"), _joined_names("collector")
            if len(learners) > 1:
                raise ConfigError(f"{len(learners)} learners joined ({', '.join(learners)}); -m dist runs one "
                                  "(system_config.learner_num=1): stop the others")
            if learners and len(collectors) >= sys_cfg.collector_num:
                break
            if time.monotonic() > deadline:
                if learners and collectors:
                    print(f"stride: after {timeout:g} s (--wait), {len(collectors)} of {sys_cfg.collector_num} "
                          f"collector(s) joined ({', '.join(collectors)}): starting with them; more are taken in as "
                          "they join", flush=True)
                    break
                raise ResourceError(
                    f"after {timeout:g} s, {len(learners)} learner(s) and {len(collectors)} of "
                    f"{sys_cfg.collector_num} collector(s) joined namespace {namespace_of(cfg)} "
                    f"({', '.join(learners + collectors) or 'none'}); the learner and at least one collector are "
                    "needed: stride -m dist --module learner|collector --module-name NAME -c CFG.json, or give a "
                    "longer --wait")
            time.sleep(1.0)
        learner = ray.get_actor(actor_name("learner", learners[0]))
        joined = [(ray.get_actor(actor_name("collector", c)), c, collector_index(c)) for c in collectors]
        return JoinedRoles(learner, joined, JoinedCollectors(namespace_of(cfg), timeout, collectors))

    return find


def run_coordinator(dist_file: Optional[str], address: Optional[str], wait: float, max_train_iter: Optional[int],
                    max_env_step: Optional[int], progress: bool, resume: Optional[str] = None) -> Policy:
    """Drive a run with the roles that joined (``-m parallel``'s loop); returns the trained policy.
    ``resume``: a ``-m dist`` run's folder or checkpoint, continued as ``-m parallel --resume``
    continues its runs (:func:`resumed_run`); ``dist_file`` may then be left out."""
    from .cluster import check_address
    from .pipeline import train_on_ray

    deadline = time.monotonic() + wait  # --wait bounds the whole joining: the connection and the roles
    resume_ckpt: Optional[str] = None
    if resume is None:
        if dist_file is None:
            raise ConfigError("--module coordinator needs -c DATA.json (the file --module config wrote) or --resume RUN")
        cfg, sys_cfg, _ = read_dist_config(dist_file)
    else:
        cfg, sys_cfg, resume_ckpt = resumed_run(resume, dist_file)
    sys_cfg.address = resolve_address(address, sys_cfg)
    token_auth_env()
    check_address(sys_cfg.address, min(10.0, wait))
    return train_on_ray(cfg, sys_cfg, max_train_iter, max_env_step, progress, namespace=namespace_of(cfg),
                        find_roles=find_joined_roles(wait, deadline), new_dir=False, join_deadline=deadline,
                        join_wait=wait, resume_ckpt=resume_ckpt)


def resumed_run(resume: str, dist_file: Optional[str]) -> Tuple[Config, Config, str]:
    """``(cfg, system_config, checkpoint)`` of the ``-m dist`` run that ``resume`` (its folder or a
    checkpoint in it) names, read as ``-m parallel --resume`` reads its runs (the saved configs; a
    run another mode made is refused in one line). ``dist_file``, when given, must be that run's
    data file. The run's learner and collectors are new processes, started as before (``--module
    learner|collector -c DATA.json``): the coordinator hands the learner the checkpoint and renews
    a collector whose name the replay saw (:meth:`~.actors.RunActors.take_in`)."""
    from ..run_state import DIST, read_system_config
    from ..serial_entry import load_cfg

    import_components()
    cfg, ckpt = load_cfg(None, 0, None, resume, mode=DIST)
    assert ckpt is not None  # (load_cfg returns the checkpoint of a resume)
    cfg.exp_name = os.path.abspath(str(cfg.exp_name))  # as the data file names it: the roles may run elsewhere
    if dist_file is not None:
        named = os.path.abspath(str(read_dist_data(dist_file)["exp_dir"]))
        if named != cfg.exp_name:
            raise ConfigError(f"'{dist_file}' is the dist config of the run '{named}', not of '{cfg.exp_name}' "
                              "(--resume); valid choices: that run's data file, or no -c")
    return cfg, compile_system_config(read_system_config(cfg.exp_name)), os.path.abspath(ckpt)


def run_all(config_file: str, seed: int, main: Mapping[str, object], create: Mapping[str, object],
            system: Mapping[str, object], exp_name: str, address: Optional[str], max_train_iter: Optional[int],
            max_env_step: Optional[int], progress: bool) -> Policy:
    """The short form ``-m dist -c cfg.py --address HOST:PORT``: every role started by the
    coordinator on the running cluster (``parallel_pipeline`` with ``system_config.address``)."""
    from .pipeline import parallel_pipeline

    address = resolve_address(address, compile_system_config(system))
    token_auth_env()
    return parallel_pipeline([main, create, {**dict(system), "address": address}],
                             seed=seed, max_train_iter=max_train_iter, max_env_step=max_env_step,
                             exp_name=exp_name, progress=progress)


def resume_all(resume: str, max_train_iter: Optional[int], max_env_step: Optional[int], progress: bool) -> Policy:
    """``-m dist --resume RUN``: the short form's run (a ``-m parallel`` run on the cluster its
    ``system_config.json`` names) continued by ``parallel_pipeline``, with token authentication."""
    from .pipeline import parallel_pipeline

    token_auth_env()
    return parallel_pipeline(None, max_train_iter=max_train_iter, max_env_step=max_env_step, progress=progress,
                             resume=resume)


def slurm_lines(dist_file: str, address: str, learner_hosts: Sequence[str], collector_hosts: Sequence[str],
                collector_num: int) -> List[str]:
    """The shell lines that run a dist config on SLURM nodes: one Ray node per host and its roles
    (the learner, collectors spread round-robin), then the coordinator where the lines run (the
    head's host). ``srun`` passes the environment, the token's path included."""
    if not learner_hosts or not collector_hosts:
        raise ConfigError("-p slurm needs --learner-host HOST and --collector-host HOST [HOST ...] (SLURM node "
                          "names)")
    if len(learner_hosts) != 1:
        raise ConfigError(f"--learner-host: one host, got {len(learner_hosts)} ({' '.join(learner_hosts)}); "
                          "-m dist runs one learner")
    stride = f"stride -m dist -c {shlex.quote(os.path.abspath(dist_file))} --address {shlex.quote(address)}"
    roles: Dict[str, List[str]] = {learner_hosts[0]: [f"{stride} --module learner --module-name learner0"]}
    for k in range(collector_num):
        host = collector_hosts[k % len(collector_hosts)]
        roles.setdefault(host, []).append(f"{stride} --module collector --module-name collector{k}")
    head, _, port = address.rpartition(":")
    try:
        ipaddress.ip_address(head.strip("[]"))
        bind = f" --node-ip-address={head.strip('[]')}"  # Ray's listeners on the head bind that address only
        where = f"its listeners bind {head.strip('[]')} only"
    except ValueError:  # a host name: which of its addresses is the cluster's network is the user's to say
        bind = ""
        where = ("without --node-ip-address=<the head's IP on the cluster network> its listeners bind every "
                 "interface: add it")
    lines = ["export RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH=${RAY_AUTH_TOKEN_PATH:-$HOME/.ray/auth_token}",
             f"# first, on the head ({address}): (umask 077; ray get-auth-token --generate); ray start --head{bind} "
             f"--port={port} --include-dashboard=false --disable-usage-stats   # {where}"]
    for host, commands in roles.items():
        script = (f"ray start --address={shlex.quote(address)} --disable-usage-stats && "
                  f"{{ {' & '.join(commands)} & wait; }}; ray stop")
        lines.append(f"srun --nodes=1 --ntasks=1 --overlap -w {shlex.quote(host)} bash -c {shlex.quote(script)} &")
    lines.append(f"{stride} --module coordinator -p local")
    lines.append("wait")
    return lines
