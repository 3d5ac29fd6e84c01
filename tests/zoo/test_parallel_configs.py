"""The zoo's parallel configs (``stride/zoo/<env>/config/parallel/``): each compiles with its
``system_config`` as ``-m parallel`` checks it; the Atari ones' roles run a few collects in-process
(uint8 frames from the collector to the learner), and one runs on Ray (slow)."""

from __future__ import annotations

import copy
import glob
import importlib
import importlib.util
import json
import os
import subprocess

import pytest

from stride.config import compile_config
from stride.entry.parallel.pipeline import check_fresh, check_replicas
from stride.entry.parallel.system import compile_system_config, cpus_needed
from stride.utils.registry import import_components
from tests.entry.stride_process import STRIDE

ZOO = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "stride", "zoo")
MODULES = sorted(f"stride.zoo.{os.path.relpath(p, ZOO)[:-3].replace(os.sep, '.')}"
                 for p in glob.glob(os.path.join(ZOO, "*", "config", "parallel", "*_config.py")))


def test_the_issue_s_parallel_configs_exist():
    names = {m.rsplit(".", 1)[-1] for m in MODULES}
    assert {"cartpole_ppo_config", "cartpole_dqn_config", "cartpole_impala_config", "pong_dqn_config",
            "breakout_ppo_config", "breakout_impala_config"} <= names


@pytest.mark.parametrize("name", MODULES)
def test_each_parallel_config_compiles_with_its_system_config(name):
    if ".atari." in name:
        pytest.importorskip("ale_py")
    import_components()
    mod = importlib.import_module(name)
    cfg = compile_config(copy.deepcopy(mod.main_config), create_cfg=copy.deepcopy(mod.create_config), seed=0,
                         save_cfg=False)
    sys_cfg = compile_system_config(mod.system_config)
    check_fresh(cfg, sys_cfg)
    check_replicas(cfg, sys_cfg)
    assert cpus_needed(sys_cfg) <= 2  # fits a 2-core machine, as the docstrings say
    serial_name = name.replace(".parallel.", ".")  # the serial config it derives from, where there is one
    if importlib.util.find_spec(serial_name) is not None:  # the same random warm-up as the serial run
        serial_main = importlib.import_module(serial_name).main_config
        assert cfg.policy.get("random_collect_size", 0) == serial_main["policy"].get("random_collect_size", 0)


def _atari(name: str):
    """An Atari parallel config shrunk to seconds (sizes changed here, never in the config)."""
    pytest.importorskip("ale_py")
    pytest.importorskip("cv2")
    mod = importlib.import_module(f"stride.zoo.atari.config.parallel.{name}")
    main, create = copy.deepcopy(mod.main_config), copy.deepcopy(mod.create_config)
    main["env"].update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=100)
    p = main["policy"]
    if p.get("other", {}).get("replay_buffer"):
        p["other"]["replay_buffer"].update(replay_buffer_size=500, min_sample_size=0)
    if create["policy"]["type"] == "ppo":
        p["learn"].update(batch_size=32, epoch_per_collect=1)
        p["collect"]["n_sample"] = 64
    elif create["policy"]["type"] == "impala":
        p["learn"].update(batch_size=4)
        p["collect"].update(n_sample=4, unroll_len=8)
    else:
        p["learn"].update(batch_size=8, update_per_collect=2)
        p["collect"]["n_sample"] = 16
    p["eval"]["evaluator"].update(eval_freq_envstep=10 ** 6)
    return main, create, mod.system_config


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", [pytest.param("pong_dqn_config", marks=pytest.mark.slow), "breakout_ppo_config",
                                  pytest.param("breakout_impala_config", marks=pytest.mark.slow)])
def test_atari_parallel_roles_carry_uint8_frames_to_the_learner(name, tmp_path):
    """The roles the actors run, in-process: collects of stacked uint8 frames, the replay (off-policy)
    or the whole unroll (on-policy) to the learner, the weights back to the collector."""
    import numpy as np

    from stride.entry.parallel.roles import CollectorRole, LearnerRole, ReplayRole

    main, create, system = _atari(name)
    create["env_manager"]["type"] = "base"
    cfg = compile_config(main, create_cfg=create, seed=0, exp_name=str(tmp_path / name), save_cfg=False)
    collector, learner = CollectorRole(cfg, "collector0", index=0), LearnerRole(cfg)
    try:
        meta, data = collector.collect(learner.collect_state(), 0, envstep=0, train_iter=0)
        assert all(d["obs"].dtype == np.uint8 and d["obs"].shape[-3:] == (4, 84, 84) for d in data)
        if cfg.policy.on_policy:
            out = learner.train_fresh(meta["tag"], data, meta["envstep"], int(compile_system_config(system).max_staleness))
        else:
            replay = ReplayRole(cfg, None)
            replay.push(data, meta["envstep"], tag=meta["tag"])
            out = learner.train(replay.sample(1, int(cfg.policy.learn.batch_size), 0), meta["envstep"])
        assert out["train_iter"] == 1
        meta2, _ = collector.collect(learner.collect_state(), 1, envstep=meta["envstep"], train_iter=1)
        assert meta2["tag"].policy_iter == 1
    finally:
        collector.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_atari_parallel_config_runs_on_ray(tmp_path):
    """Breakout PPO's parallel config, shrunk, through the command: collector actors with the
    subprocess env manager, frames through Ray's object store, a few train iterations."""
    pytest.importorskip("ray")
    main, create, system = _atari("breakout_ppo_config")
    path = tmp_path / "cfg.py"
    path.write_text("import stride.zoo.atari.envs\n"
                    f"main_config = {main!r}\ncreate_config = {create!r}\nsystem_config = {system!r}\n")
    proc = subprocess.run([*STRIDE, "-m", "parallel", "-c", str(path), "-s", "0",
                           "--exp-name", str(tmp_path / "exp"), "--no-progress", "--env-step", "512"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["env_step"] >= 512 and result["train_iter"] >= 1
    assert result["train_iter"] + result["stale_dropped"] == result["batches"]
