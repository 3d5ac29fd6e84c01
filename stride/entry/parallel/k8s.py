"""``stride -m dist --module config -p k8s``: a KubeRay ``RayJob`` manifest for a dist run.

Kubernetes: with the KubeRay operator (>= 1.6: ``authOptions``) in the cluster and a
PersistentVolumeClaim that every pod can mount (ReadWriteMany) for the run folders::

    stride -m dist --module config -p k8s -c cfg.py -s 0 --image ghcr.io/you/stride:0.1.0 --volume-claim runs
    kubectl apply -f cfg.py.rayjob.yaml

writes ``cfg.py.json`` (as ``-p local``) and ``cfg.py.rayjob.yaml`` beside it: a ConfigMap holding
that data file and a ``RayJob`` (``ray.io/v1``) whose cluster runs the image given with ``--image``
(Stride with ``stride-rl[dist]`` installed; its Ray the one installed here, the manifest's
``rayVersion``). The job's entrypoint, on the head, is the ``--module`` commands of ``-m dist``
unchanged (one ``sh -c`` script): ``learner0`` and
``system_config.collector_num`` collectors as serving processes, then the coordinator; their
actors are placed by Ray on the worker group, one pod per role actor, each pod with the largest of
``system_config``'s ``collector_cpus`` / ``learner_cpus`` / ``replay_cpus`` rounded up to whole
CPUs (Ray's ``--num-cpus`` is whole); the head has ``num-cpus: 0`` (drivers only). The claim is
mounted at the experiment folder's parent on every pod, so the absolute path the data file names
is the same everywhere (``--module config`` names a new folder, as ever). Token authentication
is on (``authOptions.mode: token``): KubeRay makes a Secret with a random token and hands it to
every Ray container, the job's submitter included, as ``RAY_AUTH_TOKEN`` by a ``secretKeyRef``,
so no token is ever written in the manifest nor leaves the cluster. The cluster is deleted when
the job finishes (``shutdownAfterJobFinishes``); the run folder stays on the claim. The command
prints the ``kubectl`` lines: apply, then ``kubectl get rayjob NAME`` and ``kubectl logs -f
job/NAME`` (the run's lines, through KubeRay's submitter).

Better than the peers: RLlib leaves the RayJob to the user, DI-engine's Kubernetes path
(DI-orchestrator) is an operator of its own; here the run's config, resources and commands go
into a manifest KubeRay's published CRD accepts (the tests check it against the vendored schema).
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import re
import shlex
from typing import Dict, List, Mapping, Optional, Tuple

from ...utils.errors import ConfigError
from ...utils.extras import install_hint
from ...utils.files import atomic_write_text

#: the KubeRay API of the manifest
API_VERSION = "ray.io/v1"
#: where the head mounts the ConfigMap holding the dist data file
CONFIG_MOUNT = "/stride/config"
#: the head's CPUs: Ray's GCS and dashboard, the coordinator (its evaluation envs) and the roles' drivers
HEAD_CPUS = 2
#: KubeRay's limit on a RayJob's name (utils.MaxRayJobNameLength, KubeRay 1.7)
MAX_NAME = 47
#: a ConfigMap holds at most 1 MiB
MAX_CONFIGMAP_BYTES = 1 << 20
_IMAGE = re.compile(r"[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
                    r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")


def check_k8s_flags(module: Optional[str], image: Optional[str], volume_claim: Optional[str],
                    address: object = None) -> None:
    """``-p k8s``'s flags checked before anything is written (one line naming a missing or bad
    value): ``--module config``, ``--image``, ``--volume-claim``, no head address (``--address`` or
    ``system_config.address``: the RayJob's job finds its own cluster), Ray installed here."""
    if module != "config":
        raise ConfigError(f"-p k8s writes a RayJob manifest, got --module {module}; valid choices: --module config")
    if address is not None:
        raise ConfigError(f"-p k8s runs on the RayJob's own cluster, which its job finds itself, got the head "
                          f"address {address!r}; valid choices: no --address and system_config.address=None")
    if not image:
        raise ConfigError("-p k8s needs --image IMAGE: a container image with stride-rl[dist] installed, e.g. "
                          "ghcr.io/you/stride:0.1.0")
    if not _IMAGE.fullmatch(image):
        raise ConfigError(f"--image {image!r} is not a container image reference; valid: [REGISTRY/]NAME[:TAG]"
                          "[@sha256:DIGEST] in lower case, e.g. ghcr.io/you/stride:0.1.0")
    if not volume_claim:
        raise ConfigError("-p k8s needs --volume-claim NAME: a PersistentVolumeClaim every pod can mount "
                          "(ReadWriteMany) for the run folders")
    if len(volume_claim) > 253 or not _DNS_SUBDOMAIN.fullmatch(volume_claim):
        raise ConfigError(f"--volume-claim {volume_claim!r} is not a Kubernetes object name; valid: lower-case "
                          "letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253")
    ray_version()  # (a Ray installed here)


def job_name(exp_dir: str) -> str:
    """The RayJob's name from the experiment folder's: a DNS-1035 label of at most :data:`MAX_NAME`
    characters, as KubeRay requires (``cartpole_dqn_seed0`` -> ``cartpole-dqn-seed0``)."""
    name = re.sub(r"[^a-z0-9]+", "-", os.path.basename(exp_dir.rstrip("/")).lower()).strip("-")
    if not name[:1].isalpha():
        name = f"stride-{name}".rstrip("-")
    return name[:MAX_NAME].rstrip("-")


def rayjob_manifest(dist_file: str, image: str, volume_claim: str) -> List[Dict[str, object]]:
    """The ConfigMap (the data file) and the RayJob of the dist data file ``dist_file``."""
    with open(dist_file, encoding="utf-8") as f:
        text = f.read()
    if len(text.encode()) > MAX_CONFIGMAP_BYTES:
        raise ConfigError(f"dist config '{dist_file}' is {len(text.encode())} bytes; a ConfigMap holds at most "
                          f"{MAX_CONFIGMAP_BYTES}: give a smaller config")
    data = json.loads(text)
    exp_dir, system = str(data["exp_dir"]), data["system_config"]
    name, key = job_name(exp_dir), os.path.basename(dist_file)
    collectors = int(system["collector_num"])
    cpus = max(1, math.ceil(max(float(system[k]) for k in ("collector_cpus", "learner_cpus", "replay_cpus"))))
    pods = collectors + 1 + (1 if float(system["replay_cpus"]) > 0 else 0)
    runs: Dict[str, object] = {"name": "runs", "mountPath": os.path.dirname(exp_dir)}

    def pod(container: str, mounts: List[Dict[str, object]], volumes: List[Dict[str, object]],
            n_cpus: int) -> Dict[str, object]:
        cpu = {"cpu": str(n_cpus)}
        return {"spec": {"containers": [{"name": container, "image": image, "volumeMounts": mounts,
                                         "resources": {"requests": cpu, "limits": cpu}}],
                         "volumes": volumes}}

    claim: Dict[str, object] = {"name": "runs", "persistentVolumeClaim": {"claimName": volume_claim}}
    config_volume: Dict[str, object] = {"name": "dist-config", "configMap": {"name": f"{name}-config"}}
    config_map: Dict[str, object] = {"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": f"{name}-config"}, "data": {key: text}}
    rayjob: Dict[str, object] = {
        "apiVersion": API_VERSION, "kind": "RayJob", "metadata": {"name": name},
        "spec": {
            "entrypoint": entrypoint(f"{CONFIG_MOUNT}/{key}", exp_dir, collectors),
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 60,
            "rayClusterSpec": {
                "rayVersion": ray_version(),
                "authOptions": {"mode": "token"},
                "headGroupSpec": {
                    "rayStartParams": {"num-cpus": "0"},
                    "template": pod("ray-head", [runs, {"name": "dist-config", "mountPath": CONFIG_MOUNT,
                                                        "readOnly": True}], [claim, config_volume], HEAD_CPUS)},
                "workerGroupSpecs": [{
                    "groupName": "roles", "replicas": pods, "minReplicas": pods, "maxReplicas": pods,
                    "rayStartParams": {"num-cpus": str(cpus)},
                    "template": pod("ray-worker", [runs], [claim], cpus)}],
            },
        },
    }
    return [config_map, rayjob]


def ray_version() -> str:
    """The Ray release installed here (``stride-rl[dist]``'s), which the image must have too: KubeRay's
    token authentication needs the cluster's ``rayVersion`` (2.52 or later)."""
    try:
        return importlib.metadata.version("ray")
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError("-p k8s writes the cluster's Ray version (rayVersion, which KubeRay's token "
                          f"authentication needs) from the Ray installed here; none is: {install_hint('dist')} "
                          "(the image's Ray)") from None


def entrypoint(dist_file: str, exp_dir: str, collectors: int) -> str:
    """The job's command on the head: ``sh -c SCRIPT`` -- the run folder made (on the claim), the
    learner and the collectors served in the background, the coordinator in front; its exit status
    is the job's. One quoted word for ``sh``: KubeRay pastes the entrypoint into its submitter's
    shell line (``ray job submit ... -- ENTRYPOINT ;``), whose shell would run ``&`` and ``;``
    itself."""
    stride = f"stride -m dist -c {shlex.quote(dist_file)}"
    roles = [f"{stride} --module learner --module-name learner0"]
    roles += [f"{stride} --module collector --module-name collector{k}" for k in range(collectors)]
    served = " ".join(f'{role} & P="$P $!";' for role in roles)
    script = (f"mkdir -p {shlex.quote(exp_dir)} || exit 1; P=; {served} {stride} --module coordinator -p local; "
              "s=$?; kill $P 2>/dev/null; wait; exit $s")
    return f"sh -c {shlex.quote(script)}"


def write_rayjob(dist_file: str, image: str, volume_claim: str) -> Tuple[str, List[str]]:
    """Write ``<dist file>`` with ``.json`` replaced by ``.rayjob.yaml`` beside it; returns its path
    and the lines to print (where it is, the ``kubectl`` commands)."""
    docs = rayjob_manifest(dist_file, image, volume_claim)
    out = os.path.abspath(re.sub(r"\.json$", "", dist_file) + ".rayjob.yaml")
    with open(dist_file, encoding="utf-8") as f:
        name = job_name(str(json.load(f)["exp_dir"]))
    atomic_write_text(out, f"# KubeRay RayJob of the Stride run {name}: kubectl apply -f {os.path.basename(out)}\n"
                      + to_yaml(docs))
    return out, [f"stride: KubeRay manifest written to {out}",
                 f"kubectl apply -f {shlex.quote(out)}   # needs KubeRay >= 1.6 and the PersistentVolumeClaim "
                 f"{volume_claim} (ReadWriteMany) in the namespace",
                 f"kubectl get rayjob {name}; kubectl logs -f job/{name}   # its status; the run's lines"]


def to_yaml(docs: List[Dict[str, object]]) -> str:
    """Block-style YAML of JSON-like documents (``---`` between them): strings double-quoted as JSON
    writes them (valid YAML), a multi-line one as a literal block; no PyYAML needed."""
    return "---\n".join("\n".join(_lines(doc, 0)) + "\n" for doc in docs)


#: plain words YAML 1.1 reads as booleans or null
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "y", "n", "null"}


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, list) and not value:
        return "[]"
    text = str(value)
    if re.fullmatch(r"[A-Za-z/][A-Za-z0-9_./:@-]*", text) and text.lower() not in _YAML_WORDS:
        return text  # a plain scalar YAML reads as this string (never a number, bool or null)
    return json.dumps(text)


def _key(key: object) -> str:
    return str(key) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", str(key)) else json.dumps(str(key))


def _lines(value: object, indent: int) -> List[str]:
    pad = " " * indent
    out: List[str] = []
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            if isinstance(v, str) and "\n" in v.rstrip("\n") and v.endswith("\n") and not v[:1].isspace():
                out.append(f"{pad}{_key(k)}: |")
                out += [f"{pad}  {line}" if line else "" for line in v[:-1].split("\n")]
            elif isinstance(v, Mapping) and v:
                out += [f"{pad}{_key(k)}:", *_lines(v, indent + 2)]
            elif isinstance(v, list) and v:
                out += [f"{pad}{_key(k)}:", *_lines(v, indent)]
            else:
                out.append(f"{pad}{_key(k)}: {_scalar(v)}")
    elif isinstance(value, list) and value:
        for item in value:
            if (isinstance(item, Mapping) and item) or (isinstance(item, list) and item):
                inner = _lines(item, indent + 2)
                out += [f"{pad}- {inner[0][indent + 2:]}", *inner[1:]]
            else:
                out.append(f"{pad}- {_scalar(item)}")
    else:
        out.append(f"{pad}{_scalar(value)}")
    return out
