"""CartPole-v1 (Gymnasium classic control)."""
