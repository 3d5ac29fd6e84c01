"""MiniGrid configs: ``doorkey_ppo``, ``empty_ppo``."""
