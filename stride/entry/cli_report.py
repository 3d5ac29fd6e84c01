"""What ``stride`` prints when a command ends: a run's outcome and the command that resumes it, an
evaluation's returns, a dataset's episodes, a study's best config and the command that runs it.
Every command printed is one the ``stride`` command takes as printed (``tests/entry/test_cli_printed.py``)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:
    from .eval_entry import EvalResult
    from .tune import TuneResult


def finish(mode: str, result: Dict[str, Any]) -> int:
    """Report a run; its exit code (130 / 143 where a signal interrupted it)."""
    from .run_state import EXIT_CODES

    report_run(result, mode)
    return EXIT_CODES.get(str(result.get("signal")), 130) if result.get("interrupted") else 0


def report_run(result: Dict[str, Any], mode: str) -> None:
    """What a training run ended with (or that a resumed one had already finished), where its results
    are, and, interrupted, the command that resumes it."""
    from .run_state import eval_command, interrupted_note

    exp = result["exp_dir"]
    if exp is None:  # a learner replica other than rank 0 (policy.learn.multi_gpu): rank 0 reports the run
        return
    ret = result["eval_return"]
    if result.get("already_finished"):
        reached = "reached the stop value" if result["stop"] else "stopped at its step/iteration limit"
        print(f"stride: {exp} already finished ({reached} at env_step={result['env_step']} "
              f"train_iter={result['train_iter']}); nothing to resume (give a larger --env-step / --train-iter "
              "to train further)")
        return
    if result.get("interrupted"):
        status = f"interrupted ({result.get('signal') or 'SIGINT'})"
    elif result["stop"]:
        status = "reached the stop value"
    else:
        status = "stopped at the step/iteration limit"
    print(f"stride: {status}: env_step={result['env_step']} train_iter={result['train_iter']} "
          f"eval_return={'-' if ret is None else f'{ret:.2f}'} train_cpu={result['train_cpu_seconds']:.1f}s")
    best = result.get("best_eval")
    if result.get("returned") == "best" and isinstance(best, dict):
        print(f"stride: return_best: it returns the policy of its best evaluation, {best['checkpoint']} "
              f"(env_step={best['envstep']} train_iter={best['train_iter']} eval_return={best['score']:.2f})")
    written = [name for name in ("progress.csv", "league.csv", "result.json") if os.path.exists(os.path.join(exp, name))]
    print(f"stride: results in {os.path.abspath(exp)} (config, ckpt/, log/, {', '.join(written)})")
    if result.get("interrupted") and result.get("replicas", 1) > 1:
        print(f"stride: a run of {result['replicas']} learner replicas cannot be resumed yet; its checkpoints "
              f"load with: {eval_command(exp)} (or learn_mode.load_state_dict)")
    elif result.get("interrupted"):
        if "collectors_joined" in result:  # -m dist's --module forms: the roles ended with the run
            print("stride: its learner and collectors ended with it: start them again as before (stride -m dist "
                  "--module learner|collector --module-name NAME -c DATA.json), then")
        print(f"stride: {interrupted_note(mode, exp, result.get('max_env_step'), result.get('max_train_iter'))}")


def report_eval(r: "EvalResult", replay_path: Optional[str]) -> None:
    """``-m eval``'s summary: the checkpoint, the returns' mean, spread and range, the verdict against
    the stop value, and where the returns (and videos) are."""
    verdict = "" if r["stop_value"] is None else \
        f"; stop value {r['stop_value']:g}: {'reached' if r['reached'] else 'NOT reached'}"
    print(f"stride: evaluated {r['checkpoint']} (train_iter={r['train_iter']} env_step={r['envstep']}) over "
          f"{r['n_episode']} episodes, eval envs seeded {r['seed']}: mean {r['mean']:.2f} +- {r['std']:.2f} "
          f"(min {r['min']:.1f}, max {r['max']:.1f}){verdict}")
    print(f"stride: returns in {r['result_file']}")
    if replay_path:
        print(f"stride: episode videos under {replay_path}")


def report_demo(path: str) -> None:
    """``-m collect_demo``'s summary: the dataset at ``path``, read back."""
    from ..data.demo import load_demo_dataset

    data = load_demo_dataset(path)
    print(f"stride: wrote {len(data.lengths)} episodes ({len(data)} transitions, return mean "
          f"{data.returns.mean():.2f} min {data.returns.min():.1f} max {data.returns.max():.1f}) to {path}")


def report_tune(result: "TuneResult") -> None:
    """``-m tune``'s summary: the study, its best trial and value, the best config and the command that runs it."""
    what = "train CPU-seconds to the confirmed stop value" if result["best_reached"] else "no trial confirmed the stop value; penalty"
    print(f"stride: {result['n_finished']} trials in study '{result['study_name']}' ({result['storage']}); "
          f"best: trial {result['best_trial']}, {what} {result['best_value']:.2f}")
    print(f"stride: best config: {result['best_config']}")
    print(f"stride: run it: {result['best_command']}")


def tune_command(args: argparse.Namespace, seed: int) -> str:
    """The ``-m tune`` command given (its config file and folder as absolute paths): run again, it
    resumes the study."""
    import shlex

    given = ["-c", os.path.abspath(args.config)] if args.config else ["-e", args.env, "-p", args.policy]
    argv = ["stride", "-m", "tune", *given, "--trials", str(args.trials), "-s", str(seed),
            "--trial-cpu", repr(args.trial_cpu), "--trial-seeds", str(args.trial_seeds)]
    for flag, value in (("--exp-name", args.exp_name and os.path.abspath(args.exp_name)), ("--storage", args.storage),
                        ("--env-step", args.env_step), ("--workers", args.workers), ("--address", args.address)):
        argv += [flag, str(value)] if value is not None else []
    argv += ["--keep-checkpoints"] if args.keep_checkpoints else []
    for path, value in args.settings:
        argv += ["--set", f"{'.'.join(path)}={value!r}"]
    return shlex.join(argv)
