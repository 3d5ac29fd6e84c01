"""Env-manager throughput: Stride's three managers against a bare loop and the peers' vector envs.

    python benchmarks/env_managers/bench.py [--cases cartpole image burn breakout] [--seconds 1.0] [--repeats 3]

Every contestant steps 8 envs with random actions drawn beforehand (the same table for everyone,
as Python ints for per-env APIs and as arrays for vector APIs) and resets finished episodes
(auto-reset); the score is env steps per second, best of ``--repeats`` timed runs of about
``--seconds`` each, the rounds interleaved over contestants (launch and reset are not timed).
Peers that are not installed are skipped. The ``breakout`` case (8 x ``ALE/Breakout-v5`` with
Stride's standard Atari preset) adds the native C++ vector envs (ale-py's ``AtariVectorEnv``,
EnvPool) and Stride's ``vector`` manager over ale-py's; its targets are issue 15's.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import time
from typing import Callable, Dict, List, Optional, Tuple

import gymnasium as gym
import numpy as np

from stride.envs import AsyncSubprocessEnvManager, BaseEnvManager, SyncSubprocessEnvManager, VectorEnvManager
from stride.testing.fake_envs import BurnGymEnv, ImageGymEnv, make_gym_env

N_ENVS = 8
N_WORKERS = 2  # this box has 2 cores
T_ACTIONS = 4096  # rows of pre-drawn actions, cycled


BREAKOUT = "ALE/Breakout-v5"
N_THREADS = 2  # threads of the native vector envs (this box has 2 cores)


def gym_factory(case: str) -> Callable[[], gym.Env]:
    if case == "breakout":  # Stride's standard preset at the Gymnasium level, training (episodic life)
        from stride.zoo.atari.envs import make_atari_env

        return functools.partial(make_atari_env, BREAKOUT, True)
    if case == "cartpole":
        return functools.partial(gym.make, "CartPole-v1", disable_env_checker=True)
    if case == "image":
        return ImageGymEnv
    return BurnGymEnv


def stride_factory(case: str) -> Callable:
    if case == "breakout":
        from stride.zoo.atari.envs import AtariEnv

        return functools.partial(AtariEnv, cfg={"env_id": BREAKOUT, "train": True})
    name = {"cartpole": "CartPole-v1", "image": "image", "burn": "burn"}[case]
    return functools.partial(make_gym_env, name)


def n_actions(case: str) -> int:
    return {"cartpole": 2, "image": 4, "burn": 2, "breakout": 4}[case]


class Timer:
    """Run ``step()`` (which returns the env steps it did) for about ``seconds``.

    Returns (steps per wall second, steps per CPU second of this process). The second figure is
    what an in-process contestant costs, whatever other processes on the box do (on a shared
    2-core box the wall figure mostly measures the neighbours); for contestants with worker
    processes it leaves their children out, so only the wall figure compares them.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, step: Callable[[int], int]) -> Tuple[float, float]:
        for t in range(20):  # warm up
            step(t)
        done, t, start, cpu_start = 0, 0, time.perf_counter(), time.process_time()
        while True:
            for _ in range(50):
                done += step(t)
                t += 1
            elapsed = time.perf_counter() - start
            if elapsed >= self.seconds:
                return done / elapsed, done / max(time.process_time() - cpu_start, 1e-9)


# ---- contestants: each returns (step_fn, close_fn) --------------------------------------------
def bare_loop(case: str, acts: List[List[int]], arr: np.ndarray):
    envs = [gym_factory(case)() for _ in range(N_ENVS)]
    for i, e in enumerate(envs):
        e.reset(seed=i)

    def step(t: int) -> int:
        row = acts[t % T_ACTIONS]
        for i, env in enumerate(envs):
            _, _, term, trunc, _ = env.step(row[i])
            if term or trunc:
                env.reset()
        return N_ENVS

    return step, lambda: [e.close() for e in envs]


def bare_stride_loop(case: str, acts: List[List[int]], arr: np.ndarray):
    """The bare loop over Stride's ``GymnasiumEnv`` wrappers: separates wrapper cost from manager cost."""
    envs = [stride_factory(case)() for _ in range(N_ENVS)]
    for i, e in enumerate(envs):
        e.reset(seed=i)

    def step(t: int) -> int:
        row = acts[t % T_ACTIONS]
        for i, env in enumerate(envs):
            if env.step(row[i]).done:
                env.reset()
        return N_ENVS

    return step, lambda: [e.close() for e in envs]


def stride_manager(cls, cfg: dict):
    def make(case: str, acts: List[List[int]], arr: np.ndarray):
        m = cls([stride_factory(case) for _ in range(N_ENVS)], cfg)
        m.seed(0)
        m.launch()

        def step(t: int) -> int:
            row = acts[t % T_ACTIONS]
            return len(m.step({i: row[i] for i in m.ready_obs}))

        return step, m.close

    return make


def gym_vector(kind: str):
    def make(case: str, acts: List[List[int]], arr: np.ndarray):
        fns = [gym_factory(case) for _ in range(N_ENVS)]
        mode = gym.vector.AutoresetMode.SAME_STEP
        if kind == "sync":
            venv = gym.vector.SyncVectorEnv(fns, autoreset_mode=mode)
        else:
            venv = gym.vector.AsyncVectorEnv(fns, shared_memory=True, autoreset_mode=mode)
        venv.reset(seed=0)

        def step(t: int) -> int:
            venv.step(arr[t % T_ACTIONS])
            return N_ENVS

        return step, venv.close

    return make


def sb3_vec(kind: str):
    def make(case: str, acts: List[List[int]], arr: np.ndarray):
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        fns = [gym_factory(case) for _ in range(N_ENVS)]
        venv = DummyVecEnv(fns) if kind == "dummy" else SubprocVecEnv(fns)
        venv.seed(0)
        venv.reset()

        def step(t: int) -> int:
            venv.step(arr[t % T_ACTIONS])
            return N_ENVS

        return step, venv.close

    return make


def tianshou_shmem(case: str, acts: List[List[int]], arr: np.ndarray):
    from tianshou.env import ShmemVectorEnv

    venv = ShmemVectorEnv([gym_factory(case) for _ in range(N_ENVS)])
    venv.reset(seed=0)

    def step(t: int) -> int:
        _, _, term, trunc, _ = venv.step(arr[t % T_ACTIONS])
        done = np.flatnonzero(term | trunc)
        if len(done):
            venv.reset(done)
        return N_ENVS

    return step, venv.close


def ale_vector(case: str, acts: List[List[int]], arr: np.ndarray):
    """ale-py's C++ vector env, as close to the preset as it allows (README: the differences):
    sticky actions 0.25, noop_max 30, fire reset, life loss as a termination while the game goes
    on (``life_loss_info``; its ``episodic_life`` restarts the game), rewards clipped natively."""
    from ale_py.vector_env import AtariVectorEnv

    venv = AtariVectorEnv("breakout", N_ENVS, num_threads=N_THREADS, repeat_action_probability=0.25, noop_max=30,
                          use_fire_reset=True, life_loss_info=True, reward_clipping=True,
                          autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    venv.reset(seed=np.arange(N_ENVS))

    def step(t: int) -> int:
        venv.step(arr[t % T_ACTIONS])
        return N_ENVS

    return step, venv.close


def envpool_vec(case: str, acts: List[List[int]], arr: np.ndarray):
    """EnvPool's Breakout-v5 (its own C++ ALE preset): sticky actions 0.25, noop_max 30, fire
    reset, episodic life (the game goes on), rewards clipped; its autoreset is next-step."""
    import envpool

    venv = envpool.make_gymnasium("Breakout-v5", num_envs=N_ENVS, num_threads=N_THREADS, seed=0,
                                  repeat_action_probability=0.25, noop_max=30, use_fire_reset=True,
                                  episodic_life=True, reward_clip=True)
    venv.reset()
    acts32 = arr.astype(np.int32)

    def step(t: int) -> int:
        venv.step(acts32[t % T_ACTIONS])
        return N_ENVS

    return step, venv.close


STRIDE_VECTOR = "stride vector (ale-py, 2 threads)"
NATIVE = ("ale-py AtariVectorEnv (2 threads)", "envpool (2 threads)")
ASYNC_PEER = "gymnasium AsyncVectorEnv (shm)"

STRIDE_SUB = {
    # name: (class, config); 8 envs over 2 workers (this box has 2 cores), over 1, and one per process
    "stride subprocess (2 workers x 4 envs)": (SyncSubprocessEnvManager, {"envs_per_worker": 4}),
    "stride subprocess (1 worker x 8 envs)": (SyncSubprocessEnvManager, {"envs_per_worker": 8}),
    "stride subprocess (8 workers x 1 env)": (SyncSubprocessEnvManager, {"envs_per_worker": 1}),
    "stride async_subprocess (2 workers x 4 envs)": (AsyncSubprocessEnvManager, {"envs_per_worker": 4, "wait_num": 4}),
}
SUBPROCESS_PEERS = ("gymnasium AsyncVectorEnv (shm)", "sb3 SubprocVecEnv", "tianshou ShmemVectorEnv")
UNCHECKED = "stride base (nonfinite='ignore')"  # the same manager without the NaN/inf check: its cost
# (the native envs and the vector manager run threads inside this process: their CPU time is counted)
IN_PROCESS = ("bare loop", "bare loop over stride GymnasiumEnv", "stride base", UNCHECKED, "gymnasium SyncVectorEnv", "sb3 DummyVecEnv",
              STRIDE_VECTOR, *NATIVE)
TWO_WORKERS = ("stride subprocess (2 workers x 4 envs)", "stride async_subprocess (2 workers x 4 envs)")


def contestants(case: str) -> Dict[str, Callable]:
    out: Dict[str, Callable] = {
        "bare loop": bare_loop,
        "bare loop over stride GymnasiumEnv": bare_stride_loop,
        "stride base": stride_manager(BaseEnvManager, {}),
        UNCHECKED: stride_manager(BaseEnvManager, {"nonfinite": "ignore"}),
    }
    out.update({name: stride_manager(cls, cfg) for name, (cls, cfg) in STRIDE_SUB.items()})
    if case == "breakout":
        out[STRIDE_VECTOR] = stride_manager(VectorEnvManager, {"num_threads": N_THREADS})
    out.update({
        "gymnasium SyncVectorEnv": gym_vector("sync"),
        "gymnasium AsyncVectorEnv (shm)": gym_vector("async"),
        "sb3 DummyVecEnv": sb3_vec("dummy"),
        "sb3 SubprocVecEnv": sb3_vec("subproc"),
        "tianshou ShmemVectorEnv": tianshou_shmem,
    })
    if case == "breakout":
        out.update({NATIVE[0]: ale_vector, NATIVE[1]: envpool_vec})
    return out


def run_case(case: str, seconds: float, repeats: int, only: Optional[List[str]]) -> Tuple[Dict[str, float], Dict[str, float]]:
    """Best of ``repeats`` rounds; each round runs every contestant once, so that a change in the
    machine's load hits all contestants alike instead of whoever happened to run then. Returns
    steps per wall second, and steps per CPU second for the in-process contestants."""
    rng = np.random.default_rng(0)
    arr = rng.integers(0, n_actions(case), size=(T_ACTIONS, N_ENVS))
    acts = arr.tolist()
    results: Dict[str, float] = {}
    cpu_rates: Dict[str, float] = {}
    skipped: Dict[str, str] = {}
    timer = Timer(seconds)
    names = [n for n in contestants(case) if not only or any(o in n for o in only)]
    for _ in range(repeats):
        for name in names:
            if name in skipped:
                continue
            try:
                step, close = contestants(case)[name](case, acts, arr)
            except ImportError as e:
                skipped[name] = f"{e.name} not installed"
                continue
            try:
                wall, cpu = timer(step)
            finally:
                close()
            results[name] = max(results.get(name, 0.0), wall)
            if name in IN_PROCESS:
                cpu_rates[name] = max(cpu_rates.get(name, 0.0), cpu)
    for name in names:
        if name in skipped:
            print(f"  {name:<46} skipped ({skipped[name]})", flush=True)
        else:
            per_cpu = f"   {cpu_rates[name]:>10,.0f} per CPU-s" if name in cpu_rates else ""
            print(f"  {name:<46} {results[name]:>10,.0f} steps/s{per_cpu}", flush=True)
    return results, cpu_rates


def ratio(a: Optional[float], b: Optional[float]) -> str:
    return "n/a" if not a or not b else f"{a / b:.2f}x"


def breakout_ratios(r: Dict[str, float], rc: Dict[str, float]) -> None:
    """Issue 15's targets: Stride's best manager >= 1.5x Gymnasium's async, >= 0.8x the fastest native env."""
    stride = {k: v for k, v in r.items() if k.startswith("stride ")}
    best = max(stride.items(), key=lambda kv: kv[1]) if stride else (None, None)
    python = {k: v for k, v in stride.items() if k != STRIDE_VECTOR}
    best_py = max(python.items(), key=lambda kv: kv[1]) if python else (None, None)
    native = {k: v for k, v in r.items() if k in NATIVE}
    fastest = max(native.items(), key=lambda kv: kv[1]) if native else (None, None)
    print(f"  ratios: best stride ({best[0]}) / {ASYNC_PEER} = {ratio(best[1], r.get(ASYNC_PEER))} (target >= 1.5x); "
          f"/ fastest native ({fastest[0]}) = {ratio(best[1], fastest[1])} (target >= 0.8x)")
    print(f"  ratios: best stride Python manager ({best_py[0]}) / {ASYNC_PEER} = {ratio(best_py[1], r.get(ASYNC_PEER))}; "
          f"/ fastest native = {ratio(best_py[1], fastest[1])}")
    fastest_cpu = max((rc[k] for k in NATIVE if k in rc), default=None)
    print(f"  per CPU-s (in-process, threads counted): {STRIDE_VECTOR} / fastest native = {ratio(rc.get(STRIDE_VECTOR), fastest_cpu)}; "
          + ", ".join(f"{k} {ratio(rc.get(k), fastest_cpu)}" for k in ("stride base", *NATIVE) if k in rc))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", nargs="+", default=["cartpole", "image", "burn"], choices=["cartpole", "image", "burn", "breakout"])
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", nargs="*", help="run only contestants whose name contains one of these")
    args = p.parse_args()
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    print(f"# env managers, {N_ENVS} envs, random actions, auto-reset; python {platform.python_version()}, "
          f"gymnasium {gym.__version__}, numpy {np.__version__}, {os.cpu_count()} cpus, load avg {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    summary = []
    for case in args.cases:
        label = {"cartpole": "CartPole-v1", "image": "4x84x84 uint8 obs, trivial dynamics", "burn": "1 ms CPU per step",
                 "breakout": f"{BREAKOUT}, Stride's standard preset (training: episodic life)"}[case]
        print(f"\n## {label} (load avg {os.getloadavg()[0]:.2f})", flush=True)
        r, rc = run_case(case, args.seconds, args.repeats, args.only)
        bare = r.get("bare loop")
        peers = {k: v for k, v in r.items() if k in SUBPROCESS_PEERS}
        best_peer = max(peers.items(), key=lambda kv: kv[1]) if peers else (None, None)
        subs = {k: v for k, v in r.items() if k in STRIDE_SUB}
        best_sub = max(subs.items(), key=lambda kv: kv[1]) if subs else (None, None)
        two = {k: v for k, v in r.items() if k in TWO_WORKERS}
        best_two = max(two.items(), key=lambda kv: kv[1]) if two else (None, None)
        print(f"  ratios: stride base / bare loop = {ratio(r.get('stride base'), bare)} wall, "
              f"{ratio(rc.get('stride base'), rc.get('bare loop'))} per CPU-s (target >= 0.9x); "
              f"stride base / bare loop over stride GymnasiumEnv = {ratio(r.get('stride base'), r.get('bare loop over stride GymnasiumEnv'))} wall, "
              f"{ratio(rc.get('stride base'), rc.get('bare loop over stride GymnasiumEnv'))} per CPU-s")
        if rc.get("stride base") and rc.get(UNCHECKED):
            cost_ns = (1 / rc["stride base"] - 1 / rc[UNCHECKED]) * 1e9
            print(f"  NaN/inf check: stride base / {UNCHECKED} = {ratio(rc['stride base'], rc[UNCHECKED])} per CPU-s "
                  f"({cost_ns:+.0f} ns per env step)")
        if case == "breakout":
            breakout_ratios(r, rc)
        elif case in ("cartpole", "image"):
            target = "3x" if case == "cartpole" else "2x"
            print(f"  ratios: best stride subprocess ({best_sub[0]}) / best subprocess peer ({best_peer[0]}) = "
                  f"{ratio(best_sub[1], best_peer[1])} (target >= {target}); every stride subprocess config / that peer: "
                  + ", ".join(f"{k.split('(')[1][:-1]} {ratio(v, best_peer[1])}" for k, v in subs.items()))
        else:
            print(f"  ratios: stride with {N_WORKERS} worker processes ({best_two[0]}) / single-process loop = "
                  f"{ratio(best_two[1], bare)} (target >= 1.7x); best subprocess peer ({best_peer[0]}) / loop = {ratio(best_peer[1], bare)}")
        summary.append((case, r))
    print(f"\nload avg at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
