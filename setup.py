"""Build hook for the one C extension (everything else is in pyproject.toml).

``stride.envs.env_manager._fast_step`` runs ``BaseEnvManager.step``'s per-env loop in C. It is
optional: without a C compiler the install still succeeds and the manager runs the same loop in
Python (``BaseEnvManager._step_python``), only slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "stride.envs.env_manager._fast_step",
            ["stride/envs/env_manager/_fast_step.c"],
            optional=True,
        )
    ]
)
