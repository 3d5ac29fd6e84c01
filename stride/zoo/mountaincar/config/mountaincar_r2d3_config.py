"""R2D3 on MountainCar-v0: `stride -m serial -e mountaincar -p r2d3 -s 0`.

``mountaincar_r2d2``'s R2D2 as is plus a quarter of every batch (8 of 32 sequences, DI-engine's
pho 1/4) drawn from ten demonstrations, prioritised in their own store. The demonstrations come
from the scripted energy-pumping expert (:mod:`stride.zoo.mountaincar.expert`, return about -120),
written as a Minari dataset first:

    python -c "from stride.zoo.mountaincar import write_expert_demo; write_expert_demo('mountaincar_expert_demo')"
    stride -m serial -e mountaincar -p r2d3 -s 0

Measured 2026-11-26 against ``mountaincar_r2d2`` in one benchmark (``bash benchmarks/r2d3/run.sh``,
60k env-step budget, seeds 0 / 1 / 2): R2D3 confirms -150 at 24,024 / 14,040 / 30,056 env steps
(24.6 / 14.0 / 31.5 train CPU s; 100 fresh episodes -146.1 / -145.3 / -142.5), R2D2 at -- (not within
60k) / 22,032 / 28,152 -- medians 24,024 against 28,152; seeds 3-4 added: 26,016 against 52,056 over
five seeds, 5/5 confirmed against 3/5 (``benchmarks/r2d3/README.md``).
"""

from copy import deepcopy

from stride.config.config import deep_update
from stride.zoo.mountaincar.config.mountaincar_r2d2_config import create_config as _base_create
from stride.zoo.mountaincar.config.mountaincar_r2d2_config import main_config as _base_main

main_config = deep_update(deep_update({}, deepcopy(_base_main)), dict(
    exp_name="mountaincar_r2d3",
    policy=dict(collect=dict(data_path="mountaincar_expert_demo", demo_fraction=0.25)),
))

create_config = deep_update(deep_update({}, deepcopy(_base_create)), dict(policy=dict(type="r2d3")))

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
