"""CPU cost of one learner step (``learn_mode.forward`` on a replay-sized batch) per Adam variant.

    .venv/bin/python benchmarks/learner_step/bench.py [--steps 3000] [--reps 3] [--variants stride fused foreach default]

Each (config, variant, repetition) runs in its own fresh process with one torch thread; the
variants are interleaved and the minimum over repetitions is reported (process CPU microseconds
per step). Variants: ``stride`` -- the policies as they are (``stride.torch_utils.adam``, stepped with
``stride.torch_utils.step`` in ``stride.torch_utils.replica_sync.optimise``); ``fused`` -- ``torch.optim.Adam(fused=True)`` stepped
with its own ``step()``; ``foreach`` -- ``torch.optim.Adam(foreach=True)``, same; ``default`` --
``torch.optim.Adam()``, same. Configs: the zoo's CartPole DQN and Pendulum SAC.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any, Dict, List

CONFIGS = {"dqn": "stride.zoo.cartpole.config.cartpole_dqn_config",
           "sac": "stride.zoo.pendulum.config.pendulum_sac_config"}


def _variant_adam(variant: str) -> Any:
    import torch

    from stride.torch_utils import adam

    kwargs = {"fused": {"fused": True}, "foreach": {"foreach": True}, "default": {}}
    if variant == "stride":
        return adam
    return lambda params, lr, **kw: torch.optim.Adam(params, lr=lr, **kwargs[variant], **kw)


def _batch(cfg: Any, n: int) -> Dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    obs_dim, act = int(cfg.policy.model.obs_shape), cfg.policy.model.action_shape
    discrete = cfg.policy.type == "dqn"
    action = rng.integers(int(act), size=n) if discrete else rng.uniform(-1, 1, (n, int(act))).astype(np.float32)
    return {"obs": rng.standard_normal((n, obs_dim)).astype(np.float32), "action": action,
            "reward": rng.standard_normal(n).astype(np.float32),
            "next_obs": rng.standard_normal((n, obs_dim)).astype(np.float32), "done": rng.random(n) < 0.05,
            "value_gamma": np.full(n, cfg.policy.discount_factor ** cfg.policy.get("nstep", 1), np.float32)}


def child(name: str, variant: str, steps: int) -> None:
    """One measurement: CPU microseconds per learner step."""
    import importlib

    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    from stride.config import compile_config
    from stride.utils.registry import POLICY_REGISTRY

    mod = importlib.import_module(CONFIGS[name])
    cfg = compile_config(mod.main_config, mod.create_config, save_cfg=False)
    policy_module = importlib.import_module(f"stride.policy.{cfg.policy.type}")
    policy_module.adam = _variant_adam(variant)  # type: ignore[attr-defined]
    if variant != "stride":  # torch's own step(), where every policy steps (replica_sync.optimise)
        base_module = importlib.import_module("stride.torch_utils.replica_sync")
        base_module.step = lambda opt: opt.step()  # type: ignore[attr-defined]
    policy = POLICY_REGISTRY.get(cfg.policy.type)(cfg.policy, enable_field=["learn"])
    batch = _batch(cfg, int(cfg.policy.learn.batch_size))
    forward = policy.learn_mode.forward
    for _ in range(200):
        forward(batch)
    t0 = time.process_time()
    for _ in range(steps):
        forward(batch)
    print(json.dumps({"us_per_step": (time.process_time() - t0) / steps * 1e6}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--configs", nargs="+", default=list(CONFIGS))
    p.add_argument("--variants", nargs="+", default=["stride", "fused", "foreach", "default"])
    p.add_argument("--child", nargs=2, metavar=("CONFIG", "VARIANT"))
    args = p.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.steps)
        return
    results: Dict[str, Dict[str, List[float]]] = {c: {v: [] for v in args.variants} for c in args.configs}
    for _ in range(args.reps):
        for c in args.configs:
            for v in args.variants:
                out = subprocess.run([sys.executable, __file__, "--child", c, v, "--steps", str(args.steps)],
                                     check=True, capture_output=True, text=True).stdout
                results[c][v].append(json.loads(out.strip().splitlines()[-1])["us_per_step"])
    for c in args.configs:
        base = min(results[c][args.variants[0]])
        for v in args.variants:
            best = min(results[c][v])
            print(f"{c:4s} {v:8s} {best:8.1f} us/step (min of {args.reps}; {best / base:.3f}x {args.variants[0]})")


if __name__ == "__main__":
    main()
