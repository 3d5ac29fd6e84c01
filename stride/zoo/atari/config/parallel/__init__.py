"""Atari configs for ``stride -m parallel -c <file> -s 0``: each is a serial config's algorithm with
the standard preset, its envs split over collector actors, plus a ``system_config``."""
