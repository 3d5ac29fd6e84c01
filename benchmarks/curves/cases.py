"""The fixed-budget cases: Stride's zoo config, the Gymnasium id both contestants are evaluated on,
the default budget and evaluation period, the published curve each is compared against, and how
often (train iterations) a run checkpoints, so a killed run loses at most that much when resumed.

MuJoCo anchors (issue 32): Tianshou's published benchmark data at 300k env steps (v3 envs; the test
return of the policy at that point, 10 episodes, median over its seeds). A case with ``overrides`` is a
variant of the zoo config (``KEY=VALUE`` pairs, as ``bench_common.stride_run --set`` takes them), run
for Stride only; ``*_td3_tianshou`` are TD3 with the three keys in which Tianshou's
``examples/mujoco/mujoco_td3.py`` differs from rl-baselines3-zoo's values. ``halfcheetah_td3_config``
ships Tianshou's values since issue 32's runs of that variant (which restates them now); the
``halfcheetah_td3`` runs in ``results/curves_issue32`` ran rl-zoo3's, from that folder's exported source.
``hopper_sac_auto_alpha`` is the Hopper SAC config with Tianshou's other temperature setting;
``hopper_sac_return_best`` the one that returns its best confirmed evaluation's policy (``return_best``),
which ``hopper_sac_config`` ships since those runs (the two cases now run the same config).
``halfcheetah_td3_utd2`` is the HalfCheetah TD3 config with two gradient steps per env step (the
update-to-data ratio issue 32 names), the actor still moving once every two critic steps, which
``halfcheetah_td3_config`` ships since those runs (the two cases now run the same config)."""

from __future__ import annotations

TIANSHOU_TD3 = ("policy.model.actor_hidden_size_list=[256,256]", "policy.model.critic_hidden_size_list=[256,256]",
                "policy.learn.learning_rate_actor=3e-4", "policy.learn.learning_rate_critic=3e-4",
                "policy.random_collect_size=25000")

#: Tianshou's ``mujoco_sac.py --auto-alpha``: the temperature learnt (from 1.0, Adam 3e-4) towards entropy -|A|
TIANSHOU_SAC_AUTO_ALPHA = ("policy.learn.auto_alpha=True", "policy.learn.alpha=1.0")

MINATAR = "bench_common.minatar_chw:MinAtarCHW/"

CASES = {
    "breakout_dqn": dict(
        algo="dqn", config="stride.zoo.minatar.config.minatar_breakout_dqn_config",
        env_id=MINATAR + "Breakout-v1", budget=2_000_000, eval_every=50_000, ckpt_every=100_000,
        published="Young & Tian (2019), MinAtar paper, DQN on Breakout; MinAtar's examples/dqn.py 11.1 at 1M (see README)"),
    "spaceinvaders_dqn": dict(
        algo="dqn", config="stride.zoo.minatar.config.minatar_spaceinvaders_dqn_config",
        env_id=MINATAR + "SpaceInvaders-v1", budget=1_000_000, eval_every=50_000, ckpt_every=100_000,
        published=("MinAtar's examples/dqn.py at 1M, run here once (seed 0): logged 28.1, its final network "
                   "35.0 on the same 100 fresh episodes (see README)")),
    "breakout_ppo": dict(
        algo="ppo", config="stride.zoo.minatar.config.minatar_breakout_ppo_config",
        env_id=MINATAR + "Breakout-v1", budget=2_000_000, eval_every=50_000, ckpt_every=200,
        published="see README"),
    "hopper_sac": dict(
        algo="sac", config="stride.zoo.mujoco.config.hopper_sac_config", env_id="Hopper-v5", zoo_env="Hopper-v4",
        budget=300_000, eval_every=10_000, ckpt_every=25_000,
        published="Tianshou SAC, Hopper-v3: 3,388 at 300k env steps"),
    "hopper_sac_auto_alpha": dict(
        algo="sac", config="stride.zoo.mujoco.config.hopper_sac_config", env_id="Hopper-v5", zoo_env="Hopper-v4",
        budget=300_000, eval_every=10_000, ckpt_every=25_000, overrides=TIANSHOU_SAC_AUTO_ALPHA,
        published="Tianshou SAC, Hopper-v3: 3,388 at 300k env steps (with a fixed alpha 0.2)"),
    "hopper_sac_return_best": dict(
        algo="sac", config="stride.zoo.mujoco.config.hopper_sac_config", env_id="Hopper-v5", zoo_env="Hopper-v4",
        budget=300_000, eval_every=10_000, ckpt_every=25_000, overrides=("policy.eval.evaluator.return_best=True",),
        published="Tianshou SAC, Hopper-v3: 3,388 at 300k env steps"),
    "halfcheetah_sac": dict(
        algo="sac", config="stride.zoo.mujoco.config.halfcheetah_sac_config", env_id="HalfCheetah-v5",
        zoo_env="HalfCheetah-v4", budget=300_000, eval_every=10_000, ckpt_every=25_000,
        published="Tianshou SAC, HalfCheetah-v3: 9,059 at 300k env steps"),
    "hopper_td3": dict(
        algo="td3", config="stride.zoo.mujoco.config.hopper_td3_config", env_id="Hopper-v5", zoo_env="Hopper-v4",
        budget=300_000, eval_every=10_000, ckpt_every=25_000,
        published="Tianshou TD3, Hopper-v3: 1,583 at 300k env steps"),
    "halfcheetah_td3": dict(
        algo="td3", config="stride.zoo.mujoco.config.halfcheetah_td3_config", env_id="HalfCheetah-v5",
        zoo_env="HalfCheetah-v4", budget=300_000, eval_every=10_000, ckpt_every=25_000,
        published="Tianshou TD3, HalfCheetah-v3: 7,546 at 300k env steps"),
    "hopper_td3_tianshou": dict(
        algo="td3", config="stride.zoo.mujoco.config.hopper_td3_config", env_id="Hopper-v5", zoo_env="Hopper-v4",
        budget=300_000, eval_every=10_000, ckpt_every=25_000, overrides=TIANSHOU_TD3,
        published="Tianshou TD3, Hopper-v3: 1,583 at 300k env steps"),
    "halfcheetah_td3_tianshou": dict(
        algo="td3", config="stride.zoo.mujoco.config.halfcheetah_td3_config", env_id="HalfCheetah-v5",
        zoo_env="HalfCheetah-v4", budget=300_000, eval_every=10_000, ckpt_every=25_000, overrides=TIANSHOU_TD3,
        published="Tianshou TD3, HalfCheetah-v3: 7,546 at 300k env steps"),
    "halfcheetah_td3_utd2": dict(
        algo="td3", config="stride.zoo.mujoco.config.halfcheetah_td3_config", env_id="HalfCheetah-v5",
        zoo_env="HalfCheetah-v4", budget=300_000, eval_every=10_000, ckpt_every=25_000,
        overrides=("policy.learn.update_per_collect=2",),
        published="Tianshou TD3, HalfCheetah-v3: 7,546 at 300k env steps"),
}

VARIANTS = frozenset(name for name, c in CASES.items() if c.get("overrides"))
