"""Overlap: ``-m parallel`` against its two stages alone, in one command (issue 29).

    python benchmarks/parallel/overlap.py                               # Pong DQN and the 1 ms CartPole DQN
    python benchmarks/parallel/overlap.py --cases burn --env-steps 10000
    python benchmarks/parallel/overlap.py --cases pong --env-steps 8000  # a 2-core box: fewer than 30k, say so
    python benchmarks/parallel/overlap.py --cases pong --cuda --collectors 8 --also 4   # a GPU machine (gpu.sh)
    python benchmarks/parallel/overlap.py --cases impala --cuda --collectors 12 --env-steps 100000

Per case, each phase a fresh process with its own local Ray instance (the pipeline's ``local_ray``):

1. **collection alone**: the pipeline's :class:`~stride.entry.parallel.coordinator.Coordinator` with
   ``max_train_iter=0`` (collectors stepping with the policy, batches routed to the replay, no
   train call); env steps/s from the batch that passes ``learn_start`` to ``learn_start + env_steps``;
2. **learning alone**, in the same process on the replay phase 1 filled (full: its size is
   ``learn_start + env_steps``): train calls as the pipeline makes them (one in flight, of its
   size, the next call's batches sampled by the replay while a call trains and passed by
   reference, weights published after each call), updates/s
   x env steps per update (1 / replay ratio) = the env steps/s learning allows;
3. **the whole run**: ``parallel_pipeline`` (what ``stride -m parallel`` runs) to
   ``learn_start + env_steps`` env steps; env steps/s after the warm-up (``result.json``'s
   ``after_warmup_env_steps / after_warmup_wall_seconds``), the replay ratio achieved, and where
   the time went: the learner busy in its calls, idle (no call: waiting for env steps), in transit
   (the rest: sampling, transfer, the driver's turn), the collectors' seconds held by the ratio.

Printed: the three rates, whole / min(collect, learn) (target >= 0.85), the lockstep bound (the
harmonic combination 1 / (1/collect + 1/learn), what a loop that alternates the stages reaches),
the CPU bound (each stage's CPU seconds per env step, every role's process and the driver's,
measured in its phase: on a box whose cores one stage alone fills, overlap cannot pass
``cores / (cpu_collect + cpu_learn)``),
and the 1-minute load around every phase. The burn case also runs the whole run with one collector:
2 collectors / 1 (target >= 1.6x).

With ``--cuda`` the learner trains on the GPU (collectors act on the CPU from the weights it
publishes), and each timed window also reports the GPU's utilisation (NVML: the share of time a
kernel ran, sampled every 0.1 s) and the memory used; the whole run reports the learner's
updates/s. Learning alone also prints what a train call's time outside the learner's step is
made of (sampling its batches to the driver, an empty call's round trip, publishing the weights),
each measured alone. ``--collectors``: the collector actors of the stages and the first whole run;
``--also N ...``: more whole runs with those counts.

Cases: ``pong`` is the zoo's Pong DQN (``ALE/Pong-v5``, the standard Atari preset) with 8 envs as 2
collectors of 4, 16 samples and 4 gradient steps of 32 per collect (replay ratio 1/4, the serial
config's), learning from 1,000 env steps (``random_collect_size``); ``burn`` is the zoo's parallel
CartPole DQN on the 1 ms env (``parallel/burn_env.py``: 2 collectors of 4 envs, ratio 1/2); ``impala``
is the zoo's parallel Breakout IMPALA (8 envs per collector, one step of 32 unrolls of 20 per 320 env
steps; episodes truncated at 2,000 steps, so the start's one-episode screen of an untrained policy
ends).
Wall clock throughout (these are throughputs on this machine; the load printed says how loaded).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)
LEARN_START = 1000  # pong: the protocol
CASES = ("pong", "burn", "impala")


class GpuSampler:
    """The GPU's utilisation (NVML, device 0, every 0.1 s) in a thread, averaged over a window later:
    what the issue asks reported beside the rates. Absent NVML or a GPU, it records nothing."""

    def __init__(self) -> None:
        import threading

        self.samples: List[Tuple[float, int, int]] = []  # (perf_counter, % of time a kernel ran, MiB used)
        self._stop = threading.Event()
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml, self._handle = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # no nvidia-ml-py, no driver, no GPU: nothing to sample
            self._nvml = None
            return
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        assert self._nvml is not None
        while not self._stop.wait(0.1):
            util = self._nvml.nvmlDeviceGetUtilizationRates(self._handle)
            mem = self._nvml.nvmlDeviceGetMemoryInfo(self._handle)
            self.samples.append((time.perf_counter(), int(util.gpu), int(mem.used) >> 20))

    def window(self, t0: float, t1: float) -> Optional[Dict[str, float]]:
        """Mean utilisation and peak memory over ``[t0, t1]`` (perf_counter seconds); None: no samples."""
        inside = [(u, m) for t, u, m in self.samples if t0 <= t <= t1]
        if not inside:
            return None
        return {"gpu_util_mean": round(sum(u for u, _ in inside) / len(inside), 1),
                "gpu_mem_peak_mib": max(m for _, m in inside), "samples": len(inside)}

    def close(self) -> None:
        self._stop.set()


def configs(case: str, collectors: int, env_steps: int, exp: str, cuda: bool = False
            ) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
    """``[main, create, system]`` of a case: evaluations out of the way (one 1-episode screen at the start);
    ``cuda``: the learner on the GPU (collectors act on the CPU from the weights it publishes)."""
    if case == "pong":
        if 8 % collectors:
            raise SystemExit(f"--collectors {collectors}: the pong case splits 8 envs evenly; valid choices: 1, 2, 4, 8")
        from stride.zoo.atari.config import pong_dqn_config as serial

        main, create = copy.deepcopy(serial.main_config), copy.deepcopy(serial.create_config)
        main["env"].update(collector_env_num=8 // collectors, evaluator_env_num=1, n_evaluator_episode=1)
        main["policy"]["random_collect_size"] = LEARN_START
        main["policy"]["collect"]["n_sample"] = 4 * (8 // collectors)  # 4 steps per env per collect, as serial
        main["policy"]["learn"]["update_per_collect"] = main["policy"]["collect"]["n_sample"] // 4  # ratio 1/4
        main["policy"]["other"]["replay_buffer"]["replay_buffer_size"] = LEARN_START + env_steps  # full at the end
        system = dict(collector_num=collectors, learner_num=1, collector_cpus=0.5, learner_cpus=0.5, replay_cpus=0.0)
    elif case == "burn":
        from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as zoo

        from parallel.burn_env import ENV_ID

        main, create = copy.deepcopy(zoo.main_config), copy.deepcopy(zoo.create_config)
        main["env"].update(env_id=ENV_ID, evaluator_env_num=1, n_evaluator_episode=1)
        main["policy"]["eval"]["evaluator"]["confirm_episode"] = 0
        main["policy"]["other"]["replay_buffer"]["replay_buffer_size"] = min(
            int(main["policy"]["other"]["replay_buffer"]["replay_buffer_size"]), 64 + env_steps)
        system = dict(copy.deepcopy(zoo.system_config), collector_num=collectors)
    elif case == "impala":
        from stride.zoo.atari.config.parallel import breakout_impala_config as zoo

        main, create = copy.deepcopy(zoo.main_config), copy.deepcopy(zoo.create_config)
        # the start's 1-episode screen: an untrained argmax policy may never FIRE after a lost life
        main["env"].update(evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=2000)
        system = dict(copy.deepcopy(zoo.system_config), collector_num=collectors)
    else:
        raise SystemExit(f"--cases: {case!r}; valid choices: {', '.join(CASES)}")
    main["policy"]["cuda"] = cuda
    # Ray's CPU shares must fit the machine: many collectors on a small box share it (scheduling only).
    # The shares are the pipeline's own reading of system_config (compile_system_config, cpus_needed).
    from stride.entry.parallel.system import compile_system_config, cpus_needed

    sys_cfg = compile_system_config(system)
    others = cpus_needed(sys_cfg) - sys_cfg.collector_num * sys_cfg.collector_cpus
    fit = ((os.cpu_count() or 1) - others) / sys_cfg.collector_num
    system["collector_cpus"] = min(float(sys_cfg.collector_cpus), int(fit * 1000) / 1000)
    main["env"]["stop_value"] = 1e9
    main["policy"]["eval"]["evaluator"]["eval_freq_envstep"] = 10 ** 9
    main["exp_name"] = exp
    return main, create, system


def phase_stages(case: str, collectors: int, env_steps: int, learn_steps: int, exp: str, seed: int,
                 cuda: bool = False) -> Dict[str, Any]:
    """Collection alone, then learning alone on the replay it filled (one process, one Ray instance)."""
    from stride.config import compile_config
    from stride.entry.parallel.cluster import local_ray
    from stride.entry.parallel.coordinator import Coordinator
    from stride.entry.parallel.system import compile_system_config
    from stride.entry.run import Run
    from stride.entry.run_state import PARALLEL
    from stride.utils.registry import import_components

    import_components()
    main, create, system = configs(case, collectors, env_steps, exp, cuda)
    cfg = compile_config(main, create_cfg=create, seed=seed, exp_name=exp, save_cfg=False)
    sys_cfg = compile_system_config(system)
    os.makedirs(cfg.exp_name, exist_ok=True)
    out: Dict[str, Any] = {}
    gpu = GpuSampler()
    with local_ray(sys_cfg.num_cpus):
        import ray  # after local_ray: it sets Ray's environment first

        co = Coordinator(cfg, sys_cfg, Run(cfg, PARALLEL, writes=False, progress=False, seed=False))
        try:
            actors = [co.learner, co.replay] + [a for a, _, _ in co.collectors.values()]

            def cpu() -> float:  # every role's process CPU and the driver's: what a stage costs the box
                return float(sum(ray.get([a.cpu_seconds.remote() for a in actors]))) + time.process_time()

            start, end = co.ratio.learn_start, co.ratio.learn_start + env_steps
            co.start()
            t0 = env0 = None
            while co.envstep < end:
                if co.next_batch(0) is not None and t0 is None and co.envstep >= start:
                    t0, env0, cpu0 = time.perf_counter(), co.envstep, cpu()
            assert t0 is not None and env0 is not None
            t1 = time.perf_counter()
            wall = t1 - t0
            steps = co.envstep - env0
            out["collect"] = {"env_steps": steps, "wall_seconds": wall, "rate": steps / wall,
                              "cpu_per_env_step": (cpu() - cpu0) / steps, "collectors": collectors,
                              "gpu": gpu.window(t0, t1)}
            co.settle()
            ray.get(list(co.in_flight))  # the collectors' last collects: nothing else runs while the learner is timed
            items = ray.get(co.replay.count.remote())
            # learning alone: the pipeline's train calls (one in flight, sampled by reference, weights published)
            size, k = int(cfg.policy.learn.batch_size), co.ratio.max_call
            calls, it = max(1, learn_steps // k), 0
            ray.get(co.learner.train.remote(co.replay.sample.remote(k, size, 0), co.envstep))  # warm (first call)
            t0, cpu0 = time.perf_counter(), cpu()
            busy = round_trip = 0.0
            batches = co.replay.sample.remote(k, size, it)
            for _ in range(calls):
                sent = time.perf_counter()
                call = co.learner.train.remote(batches, co.envstep)
                batches = co.replay.sample.remote(k, size, it)  # the next call's, drawn while this one trains
                res = ray.get(call)
                round_trip += time.perf_counter() - sent
                it = int(res["train_iter"])
                busy += float(res["seconds"])
                co.learner.collect_state.remote()
            t1 = time.perf_counter()
            wall = t1 - t0
            updates = calls * k / wall
            out["learn"] = {"updates": calls * k, "wall_seconds": wall, "updates_per_s": updates,
                            "gpu": gpu.window(t0, t1),
                            "cpu_per_env_step": (cpu() - cpu0) / (calls * k / co.ratio.ratio),
                            "busy_fraction": busy / wall, "replay_items": items,
                            "env_steps_per_update": 1 / co.ratio.ratio, "rate": updates / co.ratio.ratio}

            def median_ms(fn: Any, reps: int = 10) -> float:
                walls = []
                for _ in range(reps):
                    t = time.perf_counter()
                    fn()
                    walls.append(time.perf_counter() - t)
                return round(1000 * statistics.median(walls), 2)

            # what a call's time outside the learner's step is made of, each piece alone (medians of 10)
            out["transit_ms"] = {
                "per_call": round(1000 * (round_trip - busy) / calls, 2),  # a call's round trip minus its step time
                "sample": median_ms(lambda: ray.get(co.replay.sample.remote(k, size, it))),  # k batches to the driver
                "empty_call": median_ms(lambda: ray.get(co.learner.train.remote([], co.envstep))),
                "publish": median_ms(lambda: ray.wait([co.learner.collect_state.remote()], fetch_local=False)),
                "batches_per_call": k}
        finally:
            co.close()
            gpu.close()
    return out


def phase_run(case: str, collectors: int, env_steps: int, exp: str, seed: int, cuda: bool = False) -> Dict[str, Any]:
    """The whole ``-m parallel`` run to ``learn_start + env_steps`` env steps."""
    from stride.entry import parallel_pipeline
    from stride.entry.parallel.ratio import compile_ratio
    from stride.entry.run import RunCallback
    from stride.config import compile_config
    from stride.entry.parallel.system import compile_system_config
    from stride.utils.registry import import_components

    import_components()
    main, create, system = configs(case, collectors, env_steps, exp, cuda)
    start = compile_ratio(compile_config(copy.deepcopy(main), create_cfg=copy.deepcopy(create), seed=seed,
                                         exp_name=exp, save_cfg=False), compile_system_config(system)).learn_start

    class Window(RunCallback):
        """When the batches pass ``learn_start`` and when the last one came, with the learner's iteration:
        the timed window of the GPU's utilisation and of the learner's updates/s."""

        def __init__(self) -> None:
            self.first: Optional[Tuple[float, int]] = None
            self.last: Optional[Tuple[float, int]] = None

        def on_collect(self, envstep: int, train_iter: int) -> None:
            now = (time.perf_counter(), train_iter)
            if envstep >= start:
                self.first = self.first or now
                self.last = now

    gpu, window = GpuSampler(), Window()
    try:
        r = dict(parallel_pipeline([main, create, system], seed=seed, max_env_step=start + env_steps,
                                   progress=False, callbacks=[window]).result)
    finally:
        gpu.close()
    wall = float(r["after_warmup_wall_seconds"])
    keys = ("env_step", "train_iter", "replay_ratio", "replay_ratio_achieved", "learn_start", "replay_tolerance",
            "forced_collects", "after_warmup_env_steps", "after_warmup_wall_seconds", "learner_busy_seconds",
            "learner_idle_seconds", "collector_wait_seconds", "train_calls", "batches", "staleness_mean",
            "train_cpu_seconds", "wall_seconds", "ray_start_seconds")
    res = {"collectors": collectors, "rate": r["after_warmup_env_steps"] / wall, **{k: r.get(k) for k in keys}}
    if window.first is not None and window.last is not None and window.last[0] > window.first[0]:
        (t0, it0), (t1, it1) = window.first, window.last
        res["updates_per_s"] = (it1 - it0) / (t1 - t0)
        res["gpu"] = gpu.window(t0, t1)
    return res


def child(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(1)
    exp = os.path.join(args.out, f"{args.case}_{args.phase}_{args.collectors}")
    if args.phase == "stages":
        res = phase_stages(args.case, args.collectors, args.env_steps, args.learn_steps, exp, args.seed, args.cuda)
    else:
        res = phase_run(args.case, args.collectors, args.env_steps, exp, args.seed, args.cuda)
    print("RESULT " + json.dumps(res), flush=True)


def load() -> float:
    return round(os.getloadavg()[0], 2)


def spawn(case: str, phase: str, collectors: int, args: argparse.Namespace, env_steps: int) -> Dict[str, Any]:
    """One phase in a fresh process (PYTHONPATH: the repo, benchmarks/ and the 1 ms env's site folder)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, BENCH, os.path.join(HERE, "site")]
                                                      + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--case", case, "--phase", phase, "--collectors",
           str(collectors), "--env-steps", str(env_steps), "--learn-steps", str(args.learn_steps[case]),
           "--seed", str(args.seed), "--out", args.out] + (["--cuda"] if args.cuda else [])
    before, t = load(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise SystemExit(f"{case} {phase} failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
    print(f"  raw {case} {phase} x{collectors}: {lines[-1][len('RESULT '):]}", flush=True)
    res: Dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    res["load"] = (before, load())
    res["phase_wall_seconds"] = round(time.perf_counter() - t, 1)
    print(f"  {case} {phase} x{collectors}: done in {res['phase_wall_seconds']} s, load {res['load']}", flush=True)
    return res


def gpu_text(res: Dict[str, Any]) -> str:
    """``; GPU util X % (peak Y MiB)`` of a phase's timed window, or nothing (no GPU sampled)."""
    g = res.get("gpu")
    return f"; GPU utilisation {g['gpu_util_mean']:.0f} %, {g['gpu_mem_peak_mib']} MiB used at most" if g else ""


def report(case: str, stages: Dict[str, Any], runs: List[Dict[str, Any]], env_steps: int) -> List[str]:
    c, le = stages["collect"], stages["learn"]
    run = runs[0]
    slow = min(c["rate"], le["rate"])
    lock = 1 / (1 / c["rate"] + 1 / le["rate"])
    cores = os.cpu_count() or 1
    bound = cores / (c["cpu_per_env_step"] + le["cpu_per_env_step"])  # both stages' CPU on this box's cores
    w = float(run["after_warmup_wall_seconds"])
    busy, idle = float(run["learner_busy_seconds"]), float(run["learner_idle_seconds"])
    updates = f"; {run['updates_per_s']:.1f} learner updates/s" if run.get("updates_per_s") else ""
    lines = [
        f"## {case}: {env_steps} env steps timed after the warm-up of {run['learn_start']}",
        f"collection alone   {c['rate']:9.1f} env steps/s  ({c['env_steps']} env steps in {c['wall_seconds']:.1f} s, "
        f"{c.get('collectors', 2)} collectors{gpu_text(c)})",
        f"learning alone     {le['rate']:9.1f} env steps/s  ({le['updates_per_s']:.1f} updates/s x {le['env_steps_per_update']:g} env "
        f"steps/update; replay of {le['replay_items']} items; learner busy {100 * le['busy_fraction']:.0f} %{gpu_text(le)})",
        f"whole run          {run['rate']:9.1f} env steps/s  ({run['after_warmup_env_steps']} env steps in {w:.1f} s, "
        f"{run['collectors']} collectors{updates}{gpu_text(run)})",
        f"whole / min(collect, learn) = {run['rate'] / slow:.2f}  (target >= 0.85); lockstep bound "
        f"{lock:.1f} env steps/s = {lock / slow:.2f} of min; whole / lockstep = {run['rate'] / lock:.2f}",
        f"CPU bound: collection {1000 * c['cpu_per_env_step']:.2f} + learning {1000 * le['cpu_per_env_step']:.2f} CPU ms "
        f"per env step on {cores} cores = {bound:.1f} env steps/s ({bound / slow:.2f} of min); whole / CPU bound = "
        f"{run['rate'] / bound:.2f}",
        f"replay ratio: target {run['replay_ratio']:g}, achieved {run['replay_ratio_achieved']} "
        f"({run['train_iter']} gradient steps, {run['env_step']} env steps, tolerance {run['replay_tolerance']}, "
        f"forced collects {run['forced_collects']})",
        f"where the time goes (whole run, after the warm-up): learner busy {100 * busy / w:.0f} %, idle "
        f"{100 * idle / w:.0f} %, in transit {100 * (w - busy - idle) / w:.0f} % ({run['train_calls']} train calls); "
        f"collectors held {run['collector_wait_seconds']:.1f} s of {run['collectors']} x {w:.1f} s; "
        f"staleness mean {run['staleness_mean']:.1f}",
        f"load (1 min) around the phases: stages {stages['load']}, whole run {run['load']}",
    ]
    tr = stages.get("transit_ms")
    if tr:
        lines.insert(3, f"  a train call of {tr['batches_per_call']} batches, learning alone: {tr['per_call']:.1f} ms outside the "
                        f"learner's step (each alone: sampling the batches to the driver {tr['sample']:.1f} ms, drawn "
                        f"while the previous call trains; an empty call's round trip {tr['empty_call']:.1f} ms; "
                        f"publishing the weights {tr['publish']:.1f} ms)")
    for other in runs[1:]:
        n = other["collectors"]
        lines.append(f"whole run, {n} collector{'s' if n > 1 else ''}: {other['rate']:.1f} env steps/s (ratio achieved "
                     f"{other['replay_ratio_achieved']}{gpu_text(other)}); {run['collectors']} collectors / {n} = "
                     f"{run['rate'] / other['rate']:.2f}x" + (" (target >= 1.6x)" if (case, run['collectors'], n) == ("burn", 2, 1)
                                                              else "") + f"; load {other['load']}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=["pong", "burn"], choices=CASES)
    ap.add_argument("--env-steps", type=int, default=30000, help="env steps timed after the warm-up (issue: 30k)")
    ap.add_argument("--learn-steps-pong", type=int, default=400, help="gradient steps timed, learning alone")
    ap.add_argument("--learn-steps-burn", type=int, default=3000)
    ap.add_argument("--learn-steps-impala", type=int, default=100)
    ap.add_argument("--collectors", type=int, default=2,
                    help="collector actors of the stages and the first whole run (pong: 8 envs split among them)")
    ap.add_argument("--also", type=int, nargs="*", default=None,
                    help="more whole runs with these collector counts (default: burn 1, else none)")
    ap.add_argument("--cuda", action="store_true", help="the learner on the GPU (policy.cuda=True)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="experiment folders (default: a temporary folder)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--learn-steps", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    import tempfile

    args.out = os.path.abspath(args.out or tempfile.mkdtemp(prefix="stride-overlap-"))
    args.learn_steps = {"pong": args.learn_steps_pong, "burn": args.learn_steps_burn, "impala": args.learn_steps_impala}
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"overlap benchmark, {os.cpu_count()} cores{', learner on the GPU' if args.cuda else ''}; start: {uptime}",
          flush=True)
    if args.env_steps < 30000:
        print(f"note: {args.env_steps} env steps timed per run, fewer than the issue's 30,000", flush=True)
    out: List[str] = []
    for case in args.cases:
        stages = spawn(case, "stages", args.collectors, args, args.env_steps)
        runs = [spawn(case, "run", args.collectors, args, args.env_steps)]
        also = args.also if args.also is not None else ([1] if case == "burn" and args.collectors == 2 else [])
        runs += [spawn(case, "run", n, args, args.env_steps) for n in also]
        out += report(case, {**stages}, runs, args.env_steps) + [""]
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print("\n" + "\n".join(out) + f"end: {uptime}", flush=True)


if __name__ == "__main__":
    main()
