"""Bit-identity of the schedule mechanism against the code it replaced (issue 19, trick mode).

Short fixed-seed runs of the zoo configs whose learning rate or epsilon the schedules now drive;
prints a hash of each run's final weights. Run it with two checkouts on ``PYTHONPATH`` (the commit
before ``stride.rl_utils.schedule`` and after) and compare the lines::

    PYTHONPATH=<old checkout> python benchmarks/schedules/bit_identity.py > old.txt
    PYTHONPATH=<new checkout> python benchmarks/schedules/bit_identity.py > new.txt
    diff old.txt new.txt

Cases: PPO with ``lr_anneal_collects`` (torch ``LambdaLR`` before, a scaled ``linear`` schedule
after) decaying past 0 and mid-way, PPO with a constant rate, A2C (a constant ``LambdaLR`` before),
DQN with ``exp`` and ``linear`` epsilon, SAC, TD3 and IMPALA (constant rates read through the
schedule helper). Each takes a few seconds on one CPU thread.
"""

from __future__ import annotations

import copy
import hashlib
import os
import tempfile
from typing import Any, Callable, Dict, Mapping

import torch

from stride.entry import serial_pipeline, serial_pipeline_onpolicy
from stride.zoo.cartpole.config import cartpole_a2c_config, cartpole_dqn_config, cartpole_impala_config, cartpole_ppo_config
from stride.zoo.pendulum.config import pendulum_sac_config, pendulum_td3_config


def _digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for k, v in model.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def run(name: str, module: Any, pipeline: Callable[..., Any], patch: Mapping[str, object], **limits: int) -> str:
    main: Dict[str, Any] = copy.deepcopy(module.main_config)
    main["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=10**9))  # no evaluation: training alone
    main["policy"]["learn"].pop("learner", None)
    for key, value in patch.items():
        node = main["policy"]
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    exp = os.path.join(tempfile.mkdtemp(), name)
    policy = pipeline([main, module.create_config], seed=0, exp_name=exp, progress=False, **limits)
    return f"{name}: weights {_digest(policy.model)}"


def main() -> None:
    torch.set_num_threads(1)
    cases = [
        ("ppo_anneal", cartpole_ppo_config, serial_pipeline_onpolicy, {"learn.lr_anneal_collects": 8}, dict(max_train_iter=12)),
        ("ppo_anneal_long", cartpole_ppo_config, serial_pipeline_onpolicy, {}, dict(max_train_iter=10)),
        ("ppo_const", cartpole_ppo_config, serial_pipeline_onpolicy, {"learn.lr_anneal_collects": 0}, dict(max_train_iter=10)),
        ("a2c", cartpole_a2c_config, serial_pipeline_onpolicy, {}, dict(max_train_iter=30)),
        ("dqn_exp", cartpole_dqn_config, serial_pipeline, {}, dict(max_env_step=1500)),
        ("dqn_linear", cartpole_dqn_config, serial_pipeline,
         {"other.eps": dict(type="linear", start=1.0, end=0.1, decay=1000)}, dict(max_env_step=1500)),
        ("sac", pendulum_sac_config, serial_pipeline, {"random_collect_size": 200}, dict(max_env_step=600)),
        ("td3", pendulum_td3_config, serial_pipeline, {"random_collect_size": 200}, dict(max_env_step=600)),
        ("impala", cartpole_impala_config, serial_pipeline, {}, dict(max_train_iter=20)),
    ]
    for name, module, pipeline, patch, limits in cases:
        print(run(name, module, pipeline, patch, **limits), flush=True)


if __name__ == "__main__":
    main()
