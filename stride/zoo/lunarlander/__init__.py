"""LunarLander-v3 (Gymnasium Box2D): needs the ``box2d`` extra (``pip install stride-rl[box2d]``)."""
