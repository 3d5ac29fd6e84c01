"""The fixed-budget cases: Stride's zoo config, the Gymnasium id both contestants are evaluated on,
the default budget and evaluation period, and the published curve each is compared against."""

from __future__ import annotations

CASES = {
    "breakout_dqn": dict(
        algo="dqn", config="stride.zoo.minatar.config.minatar_breakout_dqn_config",
        env_id="bench_common.minatar_chw:MinAtarCHW/Breakout-v1", budget=2_000_000, eval_every=50_000,
        published="Young & Tian (2019), MinAtar paper, DQN on Breakout (see README)"),
    "breakout_ppo": dict(
        algo="ppo", config="stride.zoo.minatar.config.minatar_breakout_ppo_config",
        env_id="bench_common.minatar_chw:MinAtarCHW/Breakout-v1", budget=2_000_000, eval_every=50_000,
        published="see README"),
    "hopper_sac": dict(
        algo="sac", config="stride.zoo.mujoco.config.hopper_sac_config", env_id="Hopper-v5", zoo_env="Hopper-v4",
        budget=300_000, eval_every=10_000, published="issue 15: 2,500 within 300k env steps"),
}
