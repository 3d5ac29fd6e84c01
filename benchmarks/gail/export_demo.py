"""Export a Stride demonstration dataset (Minari, ``stride -m collect_demo``) to a neutral ``.npz``
that ``imitation_gail.py`` reads in ``benchmarks/.venv-imitation`` (no Minari, no Stride there).

    PYTHONPATH=. .venv/bin/python benchmarks/gail/export_demo.py DATASET_DIR OUT.npz

Read through Stride's public :func:`stride.data.demo.load_demo_dataset`, so both contestants get the
same transitions. Written per episode, end to end: ``obs`` / ``next_obs`` / ``action`` /
``terminated`` (one row per transition), ``lengths``, ``returns`` (the expert's undiscounted returns:
only the stop value, 90 % of their mean, is derived from them) and ``env_id``. No reward column: the
peer's GAIL never needs the env's reward, so it never receives it.
"""

from __future__ import annotations

import argparse

import numpy as np

from stride.data.demo import load_demo_dataset


def export(dataset_dir: str, out: str) -> dict:
    """Write ``out`` from the dataset at ``dataset_dir``; returns a summary (episodes, steps, mean return)."""
    ds = load_demo_dataset(dataset_dir)
    cols = ds.columns
    np.savez(out, obs=np.asarray(cols["obs"], dtype=np.float32), next_obs=np.asarray(cols["next_obs"], dtype=np.float32),
             action=np.asarray(cols["action"]).reshape(len(ds), -1).squeeze(-1),
             terminated=np.asarray(cols["terminated"], dtype=bool), lengths=ds.lengths, returns=ds.returns,
             env_id=np.asarray(ds.env_id or ""))
    return {"episodes": len(ds.lengths), "transitions": len(ds), "mean_return": float(ds.returns.mean()),
            "env_id": ds.env_id}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("out")
    args = ap.parse_args()
    print(export(args.dataset, args.out))


if __name__ == "__main__":
    main()
