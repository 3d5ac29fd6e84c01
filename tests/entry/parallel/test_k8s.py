"""``stride -m dist --module config -p k8s``: the KubeRay manifest, checked against KubeRay's published
RayJob CRD (its openAPIV3Schema, vendored and trimmed in data/), with no cluster; the one-line refusals."""

from __future__ import annotations

import copy
import importlib.metadata
import json
import os
import re
import shlex
import subprocess
import sys
from typing import Any, Dict, List

import jsonschema
import pytest
import yaml

from stride.entry.cli import main
from stride.entry.parallel import k8s
from stride.zoo.cartpole.config import parallel as zoo

ROLES = ("--module learner --module-name learner0",
         *(f"--module collector --module-name collector{k}" for k in range(3)), "--module coordinator -p local")
SCHEMA = os.path.join(os.path.dirname(__file__), "data", "kuberay_rayjob_v1.7.0.yaml")
IMAGE, CLAIM = "ghcr.io/you/stride:0.1.0", "stride-runs"


def _strict(node: Dict[str, Any]) -> Any:
    """The CRD's structural schema as JSON Schema, as the API server reads it: an unknown field is
    refused (a structural schema prunes it; kubectl's strict validation refuses it), an int-or-string
    is either; a property the vendored copy trimmed is refused (vendor its schema to use it)."""
    if node.get("x-stride-trimmed"):
        return False
    out = {k: v for k, v in node.items() if k not in ("properties", "items", "additionalProperties",
                                                      "x-kubernetes-int-or-string", "type")}
    if node.get("x-kubernetes-int-or-string"):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    elif "type" in node:
        out["type"] = node["type"]
    if "properties" in node:
        out["properties"] = {k: _strict(v) for k, v in node["properties"].items()}
        if "additionalProperties" not in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _strict(node["additionalProperties"])
    if "items" in node:
        out["items"] = _strict(node["items"])
    return out


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    with open(SCHEMA, encoding="utf-8") as f:
        return jsonschema.Draft7Validator(_strict(yaml.safe_load(f)))


def _errors(validator: jsonschema.Draft7Validator, doc: Dict[str, Any]) -> List[str]:
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """The manifest of the zoo's parallel CartPole DQN with 3 collectors, as the command writes it."""
    tmp = tmp_path_factory.mktemp("k8s")
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        cfg = os.path.join(os.path.dirname(zoo.__file__), "cartpole_dqn_config.py")
        assert main(["-m", "dist", "--module", "config", "-p", "k8s", "-c", cfg, "-s", "0", "--exp-name",
                     str(tmp / "runs" / "cartpole_dqn_seed0"), "--set", "system_config.collector_num=3",
                     "--image", IMAGE, "--volume-claim", CLAIM]) == 0
    finally:
        os.chdir(cwd)
    path = tmp / "cartpole_dqn_config.py.rayjob.yaml"
    return {"path": path, "tmp": tmp, "docs": list(yaml.safe_load_all(path.read_text()))}


def test_the_manifest_is_what_the_writer_made_and_kuberays_crd_takes_it(written, validator, capsys):
    config_map, rayjob = written["docs"]
    assert written["docs"] == k8s.rayjob_manifest(str(written["tmp"] / "cartpole_dqn_config.py.json"), IMAGE, CLAIM)
    assert _errors(validator, rayjob) == []
    assert rayjob["apiVersion"] == "ray.io/v1" and rayjob["kind"] == "RayJob"
    name = rayjob["metadata"]["name"]  # metadata is the API server's ObjectMeta: KubeRay's own rule on the name
    assert name == "cartpole-dqn-seed0" and len(name) <= 47 and re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name)
    assert config_map["apiVersion"] == "v1" and config_map["kind"] == "ConfigMap"
    assert set(config_map) == {"apiVersion", "kind", "metadata", "data"}
    assert config_map["data"]["cartpole_dqn_config.py.json"] == \
        (written["tmp"] / "cartpole_dqn_config.py.json").read_text()


def test_the_job_runs_the_dist_roles_on_the_pods_the_config_asks_for(written):
    _, rayjob = written["docs"]
    spec = rayjob["spec"]["rayClusterSpec"]
    assert spec["authOptions"] == {"mode": "token"}  # KubeRay's Secret, never a literal token
    assert spec["rayVersion"] == importlib.metadata.version("ray")  # KubeRay's token auth: >= 2.52, given
    assert tuple(int(p) for p in spec["rayVersion"].split(".")[:2]) >= (2, 52)
    assert "RAY_AUTH_TOKEN" not in json.dumps(rayjob)
    head, (workers,) = spec["headGroupSpec"], spec["workerGroupSpecs"]
    assert head["rayStartParams"] == {"num-cpus": "0"}
    assert workers["replicas"] == workers["minReplicas"] == workers["maxReplicas"] == 4  # learner + 3 collectors
    assert workers["rayStartParams"] == {"num-cpus": "1"}  # 0.5 CPU per role, rounded up to whole CPUs
    runs = str(written["tmp"] / "runs")
    for group in (head, workers):
        (container,) = group["template"]["spec"]["containers"]
        assert container["image"] == IMAGE
        assert {"name": "runs", "mountPath": runs} in container["volumeMounts"]
        assert {"name": "runs", "persistentVolumeClaim": {"claimName": CLAIM}} in group["template"]["spec"]["volumes"]
    sh, c, script = shlex.split(rayjob["spec"]["entrypoint"])
    data = f"{k8s.CONFIG_MOUNT}/cartpole_dqn_config.py.json"
    for role in ROLES:
        assert f"stride -m dist -c {data} {role}" in script
    assert (sh, c) == ("sh", "-c") and "collector3" not in script
    assert script.startswith(f"mkdir -p {runs}/cartpole_dqn_seed0 || exit 1; ")


def test_the_entrypoint_runs_every_role_through_kuberays_two_shells(written, tmp_path):
    """KubeRay pastes the entrypoint into its submitter's bash line (``ray job submit ... -- ENTRYPOINT
    ;``); Ray joins the words it gets (``shlex.join``) and its job supervisor runs them in a shell. A
    stand-in for both, with a ``stride`` that logs its arguments: the roles serve until the
    coordinator ends, then are stopped, and the coordinator's exit status is the job's."""
    (tmp_path / "bin").mkdir()
    log, fake = tmp_path / "roles.log", tmp_path / "bin" / "stride"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\ncase "$*" in\n'
                    f'  *coordinator*) while [ $(wc -l < {log}) -lt 5 ]; do sleep 0.05; done; exit 3;;\n'
                    '  *) exec sleep 1000;;\nesac\n')
    fake.chmod(0o755)
    supervisor = "import shlex, subprocess, sys; sys.exit(subprocess.call(shlex.join(sys.argv[1:]), shell=True))"
    entry = written["docs"][1]["spec"]["entrypoint"]
    submitter = f"{shlex.quote(sys.executable)} -c {shlex.quote(supervisor)} {entry} ;"
    path = f"{tmp_path / 'bin'}:{os.environ['PATH']}"
    done = subprocess.run(["bash", "-c", submitter], env={**os.environ, "PATH": path}, timeout=120)
    assert done.returncode == 3
    data = f"{k8s.CONFIG_MOUNT}/cartpole_dqn_config.py.json"
    assert sorted(log.read_text().splitlines()) == sorted(f"-m dist -c {data} {role}" for role in ROLES)


@pytest.mark.parametrize("change, expected", [
    (lambda j: j["spec"]["rayClusterSpec"]["workerGroupSpecs"][0].update(  # misspelt
        groupname=j["spec"]["rayClusterSpec"]["workerGroupSpecs"][0].pop("groupName")),
     ["spec.rayClusterSpec.workerGroupSpecs.0: 'groupName' is a required property",
      "spec.rayClusterSpec.workerGroupSpecs.0: Additional properties are not allowed ('groupname' was unexpected)"]),
    (lambda j: j["spec"].update(shutdownAfterJobFinish=True),
     ["spec: Additional properties are not allowed ('shutdownAfterJobFinish' was unexpected)"]),
    (lambda j: j["spec"]["rayClusterSpec"]["workerGroupSpecs"][0].update(replicas="4"),
     ["spec.rayClusterSpec.workerGroupSpecs.0.replicas: '4' is not of type 'integer'"]),
    (lambda j: j["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"].update({"num-cpus": 0}),
     ["spec.rayClusterSpec.headGroupSpec.rayStartParams.num-cpus: 0 is not of type 'string'"]),
    (lambda j: j["spec"]["rayClusterSpec"]["authOptions"].update(mode="tokens"),
     ["spec.rayClusterSpec.authOptions.mode: 'tokens' is not one of ['disabled', 'token']"]),
])
def test_the_check_refuses_what_kuberay_refuses(written, validator, change, expected):
    rayjob = copy.deepcopy(written["docs"][1])
    change(rayjob)
    assert _errors(validator, rayjob) == expected


def test_a_bad_cpu_quantity_and_a_trimmed_field_are_refused(written, validator):
    rayjob = copy.deepcopy(written["docs"][1])
    worker = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    worker["containers"][0]["resources"]["limits"]["cpu"] = "two"
    worker["nodeSelector"] = {"pool": "cpu"}  # a real PodSpec field the vendored copy trimmed
    errors = _errors(validator, rayjob)
    assert len(errors) == 2 and "limits.cpu: 'two' does not match" in errors[0] and \
        errors[1].endswith("template.spec: False schema does not allow {'pool': 'cpu'}")


@pytest.mark.parametrize("argv, message", [
    ([], "-p k8s needs --image IMAGE"),
    (["--image", "GHCR.io/you/stride 1"], "--image 'GHCR.io/you/stride 1' is not a container image reference"),
    (["--image", IMAGE], "-p k8s needs --volume-claim NAME"),
    (["--image", IMAGE, "--volume-claim", "Runs_1"], "--volume-claim 'Runs_1' is not a Kubernetes object name"),
    (["--image", IMAGE, "--volume-claim", CLAIM, "--address", "10.0.0.1:6379"],
     "-p k8s runs on the RayJob's own cluster"),
])
def test_bad_flags_are_one_line_and_write_nothing(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    cfg = os.path.join(os.path.dirname(zoo.__file__), "cartpole_dqn_config.py")
    assert main(["-m", "dist", "--module", "config", "-p", "k8s", "-c", cfg, "--exp-name", str(tmp_path / "exp"),
                 *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_only_the_config_module_writes_a_manifest(capsys):
    assert main(["-m", "dist", "--module", "learner", "--module-name", "learner0", "-p", "k8s", "-c", "x.json"]) == 2
    err = capsys.readouterr().err
    assert "-p k8s writes a RayJob manifest, got --module learner; valid choices: --module config" in err
