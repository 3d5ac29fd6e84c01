"""``stride plot``: the figure is written, and what it draws equals the runs' progress.csv."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stride.entry.cli import main
from stride.entry.plot import load_runs, normalised_finals, plot_runs
from tests.entry.stride_process import STRIDE

pytest.importorskip("matplotlib")


def _run(folder: Path, rows, env="CartPole-v1", algo="dqn", header="train_iter,envstep,eval_return_mean"):
    folder.mkdir(parents=True)
    (folder / "progress.csv").write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    (folder / "total_config.json").write_text(json.dumps({"env": {"env_id": env}, "policy": {"type": algo}}))
    return str(folder)


def test_one_seed_is_drawn_exactly_as_its_csv(tmp_path):
    run = _run(tmp_path / "cp_dqn_seed0", [(0, 0, 20.0), (10, 1000, 150.5), (20, 2000, 500.0)])
    fig = plot_runs(load_runs([run]))
    line = fig.axes[0].lines[0]
    assert line.get_xdata().tolist() == [0, 1000, 2000]
    assert line.get_ydata().tolist() == [20.0, 150.5, 500.0]
    assert fig.axes[0].get_title() == "CartPole-v1"


def test_seed_folders_are_one_run_whose_line_is_the_seeds_mean_on_their_common_steps(tmp_path):
    a = _run(tmp_path / "cp_dqn_seed0", [(0, 0, 10.0), (1, 1000, 30.0), (2, 2000, 50.0)])
    b = _run(tmp_path / "cp_dqn_seed1", [(0, 0, 20.0), (1, 1500, 40.0), (2, 1800, 60.0)])
    c = _run(tmp_path / "cp_ppo_seed0", [(0, 0, 5.0), (1, 500, 9.0)], algo="ppo")
    runs = load_runs([a, b, c])
    assert [(r.label, len(r.seeds)) for r in runs] == [("cp_dqn", 2), ("cp_ppo", 1)]
    fig = plot_runs(runs)
    dqn = fig.axes[0].lines[0]
    # steps any seed measured, up to the last one both reached (1800); each seed holds its last value
    assert dqn.get_xdata().tolist() == [0, 1000, 1500, 1800]
    assert dqn.get_ydata().tolist() == [15.0, 25.0, 35.0, 45.0]
    assert len(fig.axes[0].collections) == 1  # one band: the two-seed run's (one seed has none)
    assert fig.axes[0].lines[1].get_ydata().tolist() == [5.0, 9.0]


def test_a_seed_that_reached_its_stop_value_holds_its_last_evaluation(tmp_path):
    a = _run(tmp_path / "cp_seed0", [(0, 0, 10.0), (1, 1000, 200.0)])
    (tmp_path / "cp_seed0" / "result.json").write_text(json.dumps({"stop": True}))
    b = _run(tmp_path / "cp_seed1", [(0, 0, 20.0), (1, 1000, 60.0), (2, 3000, 180.0)])
    line = plot_runs(load_runs([a, b])).axes[0].lines[0]
    assert line.get_xdata().tolist() == [0, 1000, 3000]
    assert line.get_ydata().tolist() == [15.0, 130.0, 190.0]
    (tmp_path / "cp_seed0" / "result.json").write_text(json.dumps({"stop": False}))  # interrupted: cut at its end
    assert plot_runs(load_runs([a, b])).axes[0].lines[0].get_xdata().tolist() == [0, 1000]


def test_a_folder_of_seed_folders_is_one_run_and_envs_get_their_own_panels(tmp_path):
    for s in range(3):
        _run(tmp_path / "dqn" / f"s{s}", [(0, 0, float(s)), (1, 100, float(10 + s))])
    other = _run(tmp_path / "lunar", [(0, 0, -100.0), (1, 100, 50.0)], env="LunarLander-v3")
    fig = plot_runs(load_runs([str(tmp_path / "dqn"), other]))
    assert [ax.get_title() for ax in fig.axes] == ["CartPole-v1", "LunarLander-v3"]
    assert fig.axes[0].lines[0].get_ydata().tolist() == [1.0, 11.0]


def test_metric_and_x_pick_any_column_and_empty_cells_are_skipped(tmp_path):
    run = _run(tmp_path / "r", [(0, 0, "", 1.5), (5, 100, 3.0, 2.5), (9, 200, 4.0, "")],
               header="train_iter,envstep,eval_return_mean,train_cpu_seconds")
    fig = plot_runs(load_runs([run], metric="train_cpu_seconds", x="train_iter"), metric="train_cpu_seconds", x="train_iter")
    line = fig.axes[0].lines[0]
    assert line.get_xdata().tolist() == [0, 5] and line.get_ydata().tolist() == [1.5, 2.5]


def test_aggregate_is_the_iqm_of_normalised_finals_per_algorithm(tmp_path):
    runs = []
    for env, finals in (("A", {"dqn": [0.0, 10.0], "ppo": [5.0, 5.0]}), ("B", {"dqn": [100.0, 300.0], "ppo": [200.0, 200.0]})):
        for algo, values in finals.items():
            for s, v in enumerate(values):
                runs.append(_run(tmp_path / f"{env}_{algo}_seed{s}", [(0, 0, 0.0), (1, 10, v)], env=env, algo=algo))
    loaded = load_runs(runs)
    scores = normalised_finals(loaded)
    assert scores["dqn"]["A"].tolist() == [0.0, 1.0] and scores["ppo"]["B"].tolist() == [0.5, 0.5]
    fig = plot_runs(loaded, aggregate=True, n_boot=200)
    points = [bar.lines[0].get_xdata()[0] for bar in fig.axes[0].containers]  # each algorithm's errorbar
    assert points == pytest.approx([0.5, 0.5])  # dqn's IQM of [0, 1, 0, 1]; ppo's of [.5, .5, .5, .5]


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_the_command_writes_the_figure(tmp_path, capsys, suffix):
    run = _run(tmp_path / "cp_dqn_seed0", [(0, 0, 20.0), (10, 1000, 150.0)])
    out = tmp_path / "figs" / f"curves.{suffix}"
    assert main(["plot", run, "--out", str(out)]) == 0
    assert out.stat().st_size > 1000 and not list(out.parent.glob(".*part"))
    assert capsys.readouterr().out.strip() == f"stride: wrote {out} (1 run, 1 seed)"


@pytest.mark.parametrize("args, shown", [
    (["--out", "x.jpg"], "unknown format 'jpg'; valid choices: png, svg, pdf"),
    (["--metric", "nope"], "--metric 'nope' is not a column"),
    (["--x", "nope"], "--x 'nope' is not a column"),
])
def test_bad_input_is_one_line(tmp_path, capsys, args, shown):
    run = _run(tmp_path / "r", [(0, 0, 1.0)])
    assert main(["plot", run, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stride: error: ") and "\n" not in err and shown in err


def test_a_folder_without_progress_is_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "empty")]) == 2
    assert "holds no progress.csv" in capsys.readouterr().err


def test_the_installed_command_plots(tmp_path):
    run = _run(tmp_path / "r", [(0, 0, 1.0), (1, 10, 2.0)])
    res = subprocess.run([*STRIDE, "plot", run, "--out", str(tmp_path / "c.svg")],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")
