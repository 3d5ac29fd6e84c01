"""What ``stride`` prints at a run's end (``stride.entry.cli_report``)."""

from __future__ import annotations

from stride.entry.cli_report import report_run


def _result(tmp_path, **kw):
    return {"exp_dir": str(tmp_path), "eval_return": 12.5, "env_step": 1000, "train_iter": 900, "stop": False,
            "interrupted": False, "train_cpu_seconds": 3.0, **kw}


def test_a_run_that_returns_its_best_evaluation_says_which(tmp_path, capsys):
    best = {"score": 480.25, "train_iter": 600, "envstep": 700, "checkpoint": str(tmp_path / "ckpt" / "ckpt_best.pth.tar")}
    report_run(_result(tmp_path, returned="best", best_eval=best), "serial")
    out = capsys.readouterr().out
    assert "stopped at the step/iteration limit: env_step=1000" in out
    assert (f"return_best: it returns the policy of its best evaluation, {best['checkpoint']} "
            "(env_step=700 train_iter=600 eval_return=480.25)") in out


def test_a_run_that_returns_its_last_policy_says_nothing_of_the_best(tmp_path, capsys):
    best = {"score": 480.25, "train_iter": 600, "envstep": 700, "checkpoint": "x"}
    report_run(_result(tmp_path, returned="last", best_eval=best), "serial")
    assert "return_best" not in capsys.readouterr().out
