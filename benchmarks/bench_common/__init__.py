"""Helpers shared by the benchmark suites ``benchmarks/dqn`` and ``benchmarks/onpolicy_sac``.

Modules (import them by name; this package imports nothing heavy itself):
  ``proc``              -- contestant process set-up, CPU clock, result emission
  ``evaluate``          -- batched deterministic evaluation (discrete or continuous actions)
  ``rlzoo``             -- rl-zoo3 hyper-parameter loading and preprocessing
  ``sb3``               -- the SB3 stop-on-evaluation callback and its bookkeeping
  ``driver``            -- driver toolkit: results folder, Stride source, subprocess runner, report helpers
Contestants shared by both suites, run as modules (``python -m bench_common.stride_run`` etc.):
  ``stride_run``        -- Stride ``serial_pipeline`` on a zoo config (``--algo dqn|ppo|sac``)
  ``sb3_run``           -- stable-baselines3 with rl-zoo3's hyper-parameters (``--algo dqn|ppo|sac``)
The suites' ``run.sh`` put ``benchmarks/`` on ``PYTHONPATH`` (through ``run.sh`` here), and the
driver's :class:`~bench_common.driver.Runner` passes it on to every contestant process.
"""
