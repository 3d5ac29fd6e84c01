"""R2D3 on CartPole with the velocities hidden (``[x, theta]`` only): `stride -m serial -e cartpole_pomdp -p r2d3 -s 0`.

``cartpole_pomdp_r2d2``'s R2D2 as is (model, sequences, learning rate, exploration, buffer, the
confirmed stop value 195) plus a quarter of every batch (8 of 32 sequences, DI-engine's pho 1/4)
drawn from the expert's demonstrations, prioritised in their own store. The demonstrations come
from an R2D2 expert of the same POMDP (it sees ``[x, theta]`` too), written by ``collect_demo``:

    stride -m serial -e cartpole_pomdp -p r2d2 -s 100 --env-step 120000 --set env.stop_value=475 \\
        --exp-name cartpole_pomdp_r2d2_expert
    stride -m collect_demo -e cartpole_pomdp -p r2d2 --ckpt cartpole_pomdp_r2d2_expert --episodes 10 \\
        --out cartpole_pomdp_expert_demo
    stride -m serial -e cartpole_pomdp -p r2d3 -s 0

``benchmarks/r2d3/`` runs all of it and R2D2 beside R2D3 on seeds 0-2. Measured 2026-11-26 (60k
budget; expert 500.0, 10 episodes): R2D3 confirms 195 at 16,088 / 14,024 / 18,008 env steps (18.7 /
16.6 / 19.9 train CPU s; 100 fresh episodes 286.5 / 311.3 / 312.8), R2D2 at 16,088 / 20,104 / 12,096:
equal medians. The reward is dense and there is nothing to explore, so TD on the demonstrations adds
little here; ``mountaincar_r2d3`` is the sparse-reward case.
"""

from copy import deepcopy

from stride.config.config import deep_update
from stride.zoo.cartpole.config.cartpole_pomdp_r2d2_config import create_config as _base_create
from stride.zoo.cartpole.config.cartpole_pomdp_r2d2_config import main_config as _base_main

main_config = deep_update(deep_update({}, deepcopy(_base_main)), dict(
    exp_name="cartpole_pomdp_r2d3",
    policy=dict(collect=dict(data_path="cartpole_pomdp_expert_demo", demo_fraction=0.25)),
))

create_config = deep_update(deep_update({}, deepcopy(_base_create)), dict(policy=dict(type="r2d3")))

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
