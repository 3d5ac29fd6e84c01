"""The parallel pipeline on Ray core (``stride -m parallel``; extra ``stride-rl[dist]``).

Modules: :mod:`.tags` (batch tags and the replay's ledger), :mod:`.system` (``system_config``),
:mod:`.roles` (collector, replay and learner as plain classes over the serial workers),
:mod:`.cluster` (a loopback-only local Ray instance, or a running cluster), :mod:`.watchdog`,
:mod:`.ratio` (the replay ratio), :mod:`.coordinator` (the driver's loop, extended through a
hook), :mod:`.counters` (its counts), :mod:`.pipeline` (``parallel_pipeline``: configs checked,
the run), :mod:`.league` (the self-play league as the coordinator's hook, with collector actors:
``stride -m league --workers N``), :mod:`.dist` (``stride -m dist``: the roles as processes on a
running cluster), :mod:`.k8s` (``-m dist -p k8s``: those processes as a KubeRay ``RayJob`` manifest). The generic coordinator and roles import nothing of the league (an
import-linter contract). Only :mod:`.cluster`, :mod:`.coordinator`, :mod:`.pipeline`,
:mod:`.league` and :mod:`.dist` import
Ray, and only when a run starts: ``import stride`` and the serial pipeline never do.

Ports of ``-m parallel`` (all on 127.0.0.1, checked with ``ss -ltnp`` on Ray 2.60): the GCS
(a free port picked per run), the raylet's node-manager and object-manager ports, the Ray client
server (a free port per run; started only where grpcio is installed: Stride never uses it), the runtime-env agent, and one gRPC port per Ray worker process (the driver, each
actor, idle workers; 10002-19999). The dashboard is off; token authentication is on with a random
token per run.
"""

from typing import Any

__all__ = ["parallel_pipeline"]


def __getattr__(name: str) -> Any:
    if name == "parallel_pipeline":
        from .pipeline import parallel_pipeline

        return parallel_pipeline
    raise AttributeError(f"module 'stride.entry.parallel' has no attribute '{name}'")
