"""Stride: a reinforcement-learning framework.

DI-engine's concepts (env managers, multi-mode policies, collectors, buffers, learner, evaluator),
each algorithm readable top to bottom, and env managers that survive crashing environments.
Importing this package runs nothing but version bookkeeping.
"""

__version__ = "0.1.0"
