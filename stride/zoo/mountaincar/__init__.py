"""MountainCar-v0 (Gymnasium classic control): the sparse-reward, hard-exploration task where
demonstrations matter (R2D3 against R2D2), and its scripted expert (:mod:`.expert`)."""

from .expert import energy_pumping_action, write_expert_demo

__all__ = ["energy_pumping_action", "write_expert_demo"]
