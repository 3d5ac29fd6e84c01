"""The environment zoo: one package per environment family, each with ``config/<env>_<algo>_config.py``."""
