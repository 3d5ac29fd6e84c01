"""LunarLander-v3 (Gymnasium Box2D): needs the ``box2d`` extra (``pip install -c constraints.txt -e '.[box2d]'``)."""
