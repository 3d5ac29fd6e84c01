"""progress.csv keeps a screen's mean and its confirmation's mean apart, so a failed confirmation (a
screen at the stop value whose 100 further episodes fall short) can be seen in it: benchmarks/learning
counts them from this file."""

from __future__ import annotations

import copy
import csv
import os

import pytest

from stride.entry import serial_pipeline
from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

pytestmark = pytest.mark.timeout(240)


def test_a_failed_confirmation_shows_its_screen_and_its_confirmation(tmp_path):
    main = copy.deepcopy(main_config)
    # one-episode screens every 200 env steps, confirmed on 10 more; with seed 1 the screen at 1,200
    # steps passes 200 and its confirmation does not (the run then goes on)
    main["env"].update(stop_value=200, n_evaluator_episode=1, evaluator_env_num=1)
    main["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=200, confirm_episode=10))
    exp = str(tmp_path / "run")
    serial_pipeline([main, copy.deepcopy(create_config)], seed=1, max_env_step=1400, exp_name=exp, progress=False)
    with open(os.path.join(exp, "progress.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["confirm_return_mean"]]
    assert rows, "no screen reached the stop value: pick another seed for this test"
    for r in rows:  # a confirmation only follows a passing screen, whatever the confirmation says
        assert float(r["eval_return_mean"]) >= 200, r
    failed = [r for r in rows if float(r["confirm_return_mean"]) < 200]
    assert failed, "every confirmation passed: pick another seed for this test"
