"""Case 1 overhead figures, through the parallel pipeline's own roles on a local Ray instance.

    python parallel/overhead.py --reps 50 --exp-dir DIR --out OUT.json

On the zoo's parallel IMPALA CartPole config (CartPole's steps are ~20 us, so the overheads show):
- ``ray_start_seconds``: ``local_ray`` (the pipeline's start of a local instance) until connected;
- weight broadcast, publish: the learner actor's ``collect_state`` call until its result is in the
  object store (``ray.wait``), the one object every collector loads;
- weight broadcast, load (per collector): median wall of a ``collect`` handed that new object
  minus median of a ``collect`` keeping its weights (fetch + deserialise + ``load_state_dict``);
- per-batch overhead: median wall of one ``collect`` through the actor (call, samples back to the
  driver) minus median of the same ``CollectorRole.collect`` in this process;
- replay push round trip: ``ReplayRole.push`` of a batch (by reference) through the replay actor.
Wall time (``time.perf_counter``): these are communication costs. Medians over ``--reps``.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from typing import Any, Callable, List

from bench_common.proc import emit, setup_process


def wall(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exp-dir", required=True)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    from stride.config import compile_config
    from stride.entry.parallel.cluster import local_ray
    from stride.entry.parallel.roles import CollectorRole, LearnerRole, ReplayRole
    from stride.utils.registry import import_components
    from stride.zoo.cartpole.config.parallel import cartpole_impala_config as zoo

    import_components()
    main_cfg = copy.deepcopy(zoo.main_config)
    cfg = compile_config(main_cfg, create_cfg=copy.deepcopy(zoo.create_config), seed=args.seed,
                         exp_name=os.path.abspath(args.exp_dir), save_cfg=False)
    os.makedirs(cfg.exp_name, exist_ok=True)
    n_coll = int(zoo.system_config["collector_num"])
    med = statistics.median
    out: dict = {"case": "overhead", "reps": args.reps, "collectors": n_coll, **info}
    with local_ray(2) as ray_info:
        import ray  # after local_ray: it sets Ray's environment first

        out["ray_start_seconds"] = float(ray_info["start_seconds"])  # type: ignore[arg-type]
        learner = ray.remote(LearnerRole).options(num_cpus=0.5).remote(cfg)
        replay = ray.remote(ReplayRole).options(num_cpus=0).remote(cfg, None)
        actors = [ray.remote(CollectorRole).options(num_cpus=0.5).remote(cfg, f"collector{i}", i)
                  for i in range(n_coll)]
        local = CollectorRole(cfg, "local", n_coll)
        try:
            ray.get([a.pid.remote() for a in [learner, replay, *actors]])  # constructed
            publish: List[float] = []
            load: List[List[float]] = [[] for _ in actors]
            keep: List[List[float]] = [[] for _ in actors]
            inproc: List[float] = []
            push: List[float] = []
            for i in range(args.reps + 1):  # round 0 warms up (first calls, first loads), then dropped
                t = time.perf_counter()
                ref = learner.collect_state.remote()
                ray.wait([ref])
                publish.append(time.perf_counter() - t)
                for k, a in enumerate(actors):  # one collector at a time: no contention between them
                    load[k].append(wall(lambda: ray.get(list(a.collect.options(num_returns=2).remote(ref, i + 1, 0, 0)))))
                    keep[k].append(wall(lambda: ray.get(list(a.collect.options(num_returns=2).remote(None, i + 1, 0, 0)))))
                inproc.append(wall(lambda: local.collect(None, 0, 0, 0)))
                meta, data = actors[0].collect.options(num_returns=2).remote(None, i + 1, 0, 0)
                tag = ray.get(meta)["tag"]
                push.append(wall(lambda: ray.get(replay.push.remote(tag, data, 0))))
            drop = slice(1, None)
            out["publish_ms"] = 1e3 * med(publish[drop])
            out["load_ms"] = [1e3 * (med(l[drop]) - med(k[drop])) for l, k in zip(load, keep)]
            out["actor_collect_ms"] = [1e3 * med(k[drop]) for k in keep]
            out["inprocess_collect_ms"] = 1e3 * med(inproc[drop])
            out["per_batch_overhead_ms"] = [1e3 * med(k[drop]) - out["inprocess_collect_ms"] for k in keep]
            out["replay_push_ms"] = 1e3 * med(push[drop])
            out["batch_env_steps"] = int(ray.get(actors[0].collect.options(num_returns=2).remote(None, 0, 0, 0)[0])["envstep"])
        finally:
            local.close()
            ray.get([a.close.remote() for a in actors])
            for a in [learner, replay, *actors]:
                ray.kill(a)
    emit(out, args.out)


if __name__ == "__main__":
    main()
