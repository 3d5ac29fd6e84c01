"""Registers the 1 ms env's Gymnasium id in every process started with this folder on PYTHONPATH
(Python imports ``sitecustomize`` at start-up): the driver and the Ray actors of case 1, which a
config can only reach by id. Stride's ``GymnasiumEnv`` looks ids up with ``gymnasium.spec``, which
does not import a ``"module:Id"`` prefix as ``gymnasium.make`` does, so the id must exist already."""

import parallel.burn_env  # noqa: F401  (registers StrideBurn1ms-v0)
