"""MiniGrid configs: ``doorkey_ppo``, ``doorkey_ppo_rnd`` (PPO + RND), ``empty_ppo``."""
