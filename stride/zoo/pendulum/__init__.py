"""Pendulum-v1 (Gymnasium classic control): continuous torque in [-2, 2], 200-step episodes that
only ever end by truncation."""
