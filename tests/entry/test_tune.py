"""``stride -m tune`` / ``tune_pipeline``: Optuna studies over a policy's declared space, each trial
an ordinary serial run; the config's own values are trial 0; the same storage resumes a study (a
trial left running by a killed process is failed and retried); the best config file runs."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

optuna = pytest.importorskip("optuna")

from stride.entry.cli import main as cli_main  # noqa: E402
from stride.entry.tune import config_values, policy_search_space, tune_pipeline, with_values  # noqa: E402
from stride.entry.utils import read_config, zoo_config  # noqa: E402
from stride.utils.errors import ConfigError  # noqa: E402
from tests.entry.stride_process import STRIDE  # noqa: E402


def _cheap() -> list:
    """CartPole DQN, evaluations of 2 episodes and no confirmation: a trial is a second or two."""
    main, create = zoo_config("cartpole", "dqn")
    main = with_values(main, {"eval.evaluator.confirm_episode": 0, "eval.evaluator.eval_freq_envstep": 200})
    main["env"] = {**main["env"], "n_evaluator_episode": 2, "evaluator_env_num": 2, "stop_value": 1e9}
    return [main, create]


def test_with_values_writes_dotted_policy_keys_into_a_copy():
    main = {"policy": {"learn": {"batch_size": 64}}}
    out = with_values(main, {"learn.batch_size": 32, "other.eps.end": 0.05})
    assert out == {"policy": {"learn": {"batch_size": 32}, "other": {"eps": {"end": 0.05}}}}
    assert main == {"policy": {"learn": {"batch_size": 64}}}


def test_stored_params_become_config_values_and_trials_build_the_searched_net(tmp_path):
    name, space = policy_search_space(*reversed(zoo_config("cartpole", "dqn")))
    values = config_values(space, {"model.encoder_hidden_size_list": "[64]", "learn.batch_size": 16})
    assert values == {"model.encoder_hidden_size_list": [64], "learn.batch_size": 16}
    with pytest.raises(ConfigError, match="'learn.lr' is not a key of the study's search space"):
        config_values(space, {"learn.lr": 1e-3})
    main, create = _cheap()
    from stride.entry.serial_entry import serial_pipeline

    # a trial's run: the values written into the config (tune's objective does the same)
    trained = serial_pipeline([with_values(main, values), create], seed=0, max_env_step=16,
                              exp_name=str(tmp_path / "run"), progress=False)
    sizes = [tuple(p.shape) for p in trained.learn_mode.state_dict()["model"].values()]
    assert sizes == [(64, 4), (64,), (2, 64), (2,)], sizes  # one hidden layer of 64: rl-zoo3's 'tiny'


def test_a_study_starts_from_the_config_resumes_and_writes_a_runnable_best_config(tmp_path):
    out = str(tmp_path / "study")
    first = tune_pipeline(_cheap(), trials=2, seed=3, out_dir=out, trial_cpu_s=30, max_env_step=400)
    assert first["n_finished"] == 2 and not first["best_reached"]  # stop value 1e9: every trial scores the penalty
    assert first["best_value"] == first["penalty"] == 60.0
    study = optuna.load_study(study_name=first["study_name"], storage=first["storage"])
    t0 = study.trials[0].params
    assert t0["learn.learning_rate"] == 3e-3 and t0["learn.update_per_collect"] == 4 and t0["collect.n_sample"] == 8
    assert t0["model.encoder_hidden_size_list"] == "[128, 128]" and t0["random_collect_size"] == 0  # stored as labels
    again = tune_pipeline(_cheap(), trials=3, seed=3, out_dir=out, trial_cpu_s=30, max_env_step=400)
    assert again["n_finished"] == 3
    assert len(optuna.load_study(study_name=first["study_name"], storage=first["storage"]).trials) == 3
    assert sorted(os.listdir(os.path.join(out, "trials"))) == [f"trial_000{i}_seed3" for i in range(3)]
    with_ckpt = []
    for trial_dir in sorted(os.listdir(os.path.join(out, "trials"))):  # scores and curves kept, checkpoints: the best's
        kept = os.listdir(os.path.join(out, "trials", trial_dir))
        assert "result.json" in kept and "total_config.py" in kept and "log" in kept, kept
        with_ckpt += [trial_dir] if "ckpt" in kept else []
    assert with_ckpt == [f"trial_{again['best_trial']:04d}_seed3"], with_ckpt
    # trials 1 and 2 drew random_collect_size=1000: the 400-env-step cap ends them inside their warm-up,
    # before any evaluation; trial 0 (the config: no warm-up) evaluated
    assert "progress.csv" in os.listdir(os.path.join(out, "trials", "trial_0000_seed3"))
    main, create = read_config(again["best_config"])  # a config file that loads, with the best trial's values
    best = optuna.load_study(study_name=first["study_name"], storage=first["storage"]).trials[again["best_trial"]]
    assert main["policy"]["learn"]["learning_rate"] == best.params["learn.learning_rate"]
    assert main["policy"]["model"]["encoder_hidden_size_list"] == json.loads(best.params["model.encoder_hidden_size_list"])
    assert create["policy"]["type"] == "dqn"


def test_trial_0_is_the_config_even_where_it_lies_outside_the_declared_space(tmp_path):
    main, create = _cheap()
    main = with_values(main, {"model.encoder_hidden_size_list": [32], "learn.update_per_collect": 10,
                              "learn.learning_rate": 0.02})  # none of them in DQN's declared space
    result = tune_pipeline([main, create], trials=1, seed=0, out_dir=str(tmp_path), trial_cpu_s=30, max_env_step=50)
    t0 = optuna.load_study(study_name=result["study_name"], storage=result["storage"]).trials[0]
    assert t0.params["model.encoder_hidden_size_list"] == "[32]" and t0.params["learn.update_per_collect"] == 10
    assert t0.params["learn.learning_rate"] == 0.02
    assert t0.distributions["learn.learning_rate"].high == 0.02 and t0.distributions["learn.update_per_collect"].low == 1
    assert read_config(result["best_config"])[0]["policy"]["model"]["encoder_hidden_size_list"] == [32]


def test_around_config_widens_ranges_and_choices_to_the_configs_value():
    from stride.config.search import Choice, FloatRange, IntRange
    from stride.entry.tune import around_config

    space = {"a": IntRange(1, 8), "b": FloatRange(1e-4, 1e-2, log=True), "c": Choice([64], [64, 64]), "d": IntRange(1, 3)}
    wide = around_config(space, {"a": 10, "b": 1e-5, "c": [512, 64], "d": None})
    assert wide == {"a": IntRange(1, 10), "b": FloatRange(1e-5, 1e-2, log=True), "c": Choice([64], [64, 64], [512, 64]),
                    "d": IntRange(1, 3)}  # None cannot lie in an int range: trial 0 samples that key
    assert around_config(space, {"a": 2, "b": 1e-3, "c": (64,), "d": 1}) == space


def test_a_confirmed_solve_scores_its_train_cpu_and_slow_trials_the_penalty(tmp_path):
    main, create = _cheap()
    main["env"]["stop_value"] = 15  # a random-ish policy passes a 2-episode screen of 15 quickly
    result = tune_pipeline([main, create], trials=1, seed=0, out_dir=str(tmp_path / "a"), trial_cpu_s=30,
                           max_env_step=2000)
    assert result["best_reached"] and 0 < result["best_value"] < 30
    over = tune_pipeline(_cheap(), trials=1, seed=0, out_dir=str(tmp_path / "b"), trial_cpu_s=1e-3, max_env_step=2000)
    assert not over["best_reached"] and over["best_value"] == 2e-3


def _tune_cmd(out, *args: str) -> list:
    """A real ``stride -m tune`` command line: trials of about a CPU-second of training each."""
    return [*STRIDE, "-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "2",
            "--trial-cpu", "1", "-s", "0", "--exp-name", str(out), "--set", "policy.eval.evaluator.confirm_episode=0",
            "--set", "env.n_evaluator_episode=2", "--set", "env.evaluator_env_num=2",
            "--set", "policy.eval.evaluator.eval_freq_envstep=200", "--set", "env.stop_value=1000000000.0", *args]


def _stop_in_trial(cmd: list, run_dir: str, sig: int) -> subprocess.CompletedProcess:
    """Run ``cmd``, send ``sig`` once the trial run in ``run_dir`` has started (its folder made)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not os.path.isdir(run_dir):
        time.sleep(0.02)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_an_interrupted_then_killed_study_resumes_as_printed_and_retries_the_trial_at_once(tmp_path):
    """SIGINT mid-trial: exit 130 and a resume command; that command, verbatim, SIGKILLed mid-trial;
    rerun at once (no heartbeat wait): the config's values, twice cut short, run to the end, the study
    reaches its trials with none left RUNNING."""
    out = tmp_path / "study"
    trials = out / "trials"
    first = _stop_in_trial(_tune_cmd(out), str(trials / "trial_0000_seed0"), signal.SIGINT)
    assert first.returncode == 130, first.stderr[-3000:]
    resume = [line for line in first.stdout.splitlines() if line.startswith("stride: interrupted; resume with: ")]
    assert len(resume) == 1, first.stdout
    command = shlex.split(resume[0].split("resume with: ", 1)[1])
    assert command[0] == "stride"
    again = [*STRIDE, *command[1:]]
    killed = _stop_in_trial(again, str(trials / "trial_0001_seed0"), signal.SIGKILL)
    assert killed.returncode == -signal.SIGKILL
    storage = f"sqlite:///{out / 'study.db'}"
    states = [t.state.name for t in optuna.load_study(study_name="cartpole_dqn", storage=storage).trials]
    assert states == ["FAIL", "RUNNING"], states  # trial 0 interrupted (its retry queued), trial 1 its retry, killed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(again, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "stride: trial 1 was left running by a process that is gone" in done.stdout, done.stdout
    study = optuna.load_study(study_name="cartpole_dqn", storage=storage)
    assert [t.state.name for t in study.trials] == ["FAIL", "FAIL", "COMPLETE", "COMPLETE"]
    assert study.trials[2].system_attrs["retry_history"] == [0, 1]  # counted: the config's values, third run
    assert study.trials[2].params == study.trials[0].params and study.trials[0].params["learn.learning_rate"] == 3e-3
    assert os.listdir(out / "workers") == []  # the lock files of the two dead processes and of the last one gone


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_a_trial_is_retried_when_its_process_is_gone_and_left_alone_while_it_lives(tmp_path):
    """Liveness is the worker's lock: a live holder keeps its trial RUNNING; SIGKILLed, its trial is
    failed and queued again at once; a trial with no lock here (another machine's) waits for heartbeats."""
    from optuna.distributions import FloatDistribution
    from optuna.storages import RetryHeartbeatStaleTrialCallback

    from stride.entry.tune_state import WorkerLock, mark_trial, retry_killed

    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}", study_name="s")
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from stride.entry.tune_state import WorkerLock; "
                               "print(WorkerLock(sys.argv[1]).path, flush=True); time.sleep(300)", str(tmp_path)],
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    path = holder.stdout.readline().strip()
    live = study.ask({"x": FloatDistribution(0, 1)})
    live.set_user_attr("stride_worker_lock", {"trial": live.number, "lock": path})
    remote = study.ask({"x": FloatDistribution(0, 1)})
    remote.set_user_attr("stride_worker_lock", {"trial": remote.number, "lock": str(tmp_path / "elsewhere.lock")})
    with WorkerLock(str(tmp_path)) as mine:  # this process's own, held: never stolen either
        own = study.ask({"x": FloatDistribution(0, 1)})
        mark_trial(own, mine)
        retry = RetryHeartbeatStaleTrialCallback(max_retry=2)
        assert retry_killed(study, str(tmp_path), retry) == []
        holder.kill()
        holder.wait(timeout=30)
        holder.stdout.close()
        assert retry_killed(study, str(tmp_path), retry) == [live.number]
        assert retry_killed(study, str(tmp_path), retry) == []  # once
        states = [t.state.name for t in study.trials]
        assert states == ["FAIL", "RUNNING", "RUNNING", "WAITING"], states
        assert study.trials[3].params == study.trials[0].params and study.trials[3].system_attrs["failed_trial"] == 0
        assert os.listdir(tmp_path / "workers") == [os.path.basename(mine.path)]  # the dead one's file removed


def test_only_the_best_finished_trial_keeps_its_checkpoints(tmp_path):
    """Finished trials lose ``ckpt/`` but the best complete one; a running trial keeps its own; a
    better trial, once recorded, takes the best's place."""
    from optuna.distributions import FloatDistribution
    from optuna.trial import TrialState, create_trial

    from stride.entry.tune_state import keep_best_checkpoints

    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}", study_name="s")
    dist = {"x": FloatDistribution(0, 1)}
    for state, value in ((TrialState.COMPLETE, 5.0), (TrialState.COMPLETE, 3.0), (TrialState.PRUNED, None),
                         (TrialState.FAIL, None)):
        study.add_trial(create_trial(state=state, value=value, params={"x": 0.5}, distributions=dist))
    study.ask(dist)  # trial 4, running

    def run_dirs(number: int) -> list:
        return [str(tmp_path / f"t{number}_seed{seed}") for seed in (0, 1)]

    for number in range(6):
        for run in run_dirs(number):
            os.makedirs(os.path.join(run, "ckpt"))

    def kept() -> list:
        return sorted(n for n in range(6) if all(os.path.isdir(os.path.join(r, "ckpt")) for r in run_dirs(n)))

    keep_best_checkpoints(run_dirs, study)
    assert kept() == [1, 4, 5]  # the best (3.0), the running one, and a folder the study has no trial of
    study.tell(4, 1.0)
    keep_best_checkpoints(run_dirs, study)
    assert kept() == [4, 5]
    assert all(os.path.isdir(r) for n in range(6) for r in run_dirs(n))  # the folders themselves stay


def test_the_command_tunes_and_prints_the_best_config_and_its_command_which_runs_as_printed(
        tmp_path, capsys, monkeypatch):
    """--keep-checkpoints: every trial keeps its checkpoints; the printed run command, verbatim, trains
    the best config (stop value 15 over 2 episodes: reached in a few evaluations)."""
    rc = cli_main(["-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "2", "--env-step", "400", "-s", "1",
                   "--exp-name", str(tmp_path / "t"), "--keep-checkpoints", "--set", "policy.eval.evaluator.confirm_episode=0",
                   "--set", "env.n_evaluator_episode=2", "--set", "env.stop_value=15"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "2 trials in study 'cartpole_dqn'" in out and f"best config: {tmp_path / 't' / 'best_config.py'}" in out
    assert sorted(os.listdir(tmp_path / "t" / "trials")) == ["trial_0000_seed1", "trial_0001_seed1"]
    assert all("ckpt" in os.listdir(tmp_path / "t" / "trials" / d) for d in os.listdir(tmp_path / "t" / "trials"))
    command = [line.split("run it: ", 1)[1] for line in out.splitlines() if line.startswith("stride: run it: ")]
    assert command == [f"stride -m serial -c {tmp_path / 't' / 'best_config.py'} -s 1"], out
    assert command[0] in open(tmp_path / "t" / "best_config.py").read()  # the file says it too
    monkeypatch.chdir(tmp_path)
    rc = cli_main(shlex.split(command[0])[1:])
    assert rc == 0 and "stride: reached the stop value" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["-m", "tune", "-e", "cartpole", "-p", "dqn"], "-m tune needs --trials N"),
    (["-m", "tune", "-e", "cartpole", "-p", "ppo", "--trials", "2"],
     "policy 'ppo' declares no search space; tunable policies: dqn"),
    (["-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "2", "-s", "1", "2"], "-m tune takes one seed"),
])
def test_bad_input_is_one_line(argv, message, capsys, tmp_path):
    assert cli_main(argv + ["--exp-name", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_policy_config_without_the_key_fails_before_any_trial(tmp_path):
    from stride.entry.tune import policy_search_space

    name, space = policy_search_space({"policy": {"type": "dqn"}}, {"policy": {}})
    assert name == "dqn" and "learn.learning_rate" in space
    with pytest.raises(ConfigError, match="must name a policy"):
        policy_search_space({"policy": {}}, {})


def test_workers_run_trials_at_once_on_ray_and_leave_nothing(tmp_path):
    """--workers 2: two Ray tasks share the SQLite study; their trials overlap in time; the study
    holds the trials asked (at most one over); no Ray process or temp folder is left."""
    pytest.importorskip("ray")
    import psutil

    tag = f"STRIDE_TEST_RUN={tmp_path}"  # in the environment of every process the run starts: its Ray's too
    out = tmp_path / "t"
    cmd = [*STRIDE, "-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "4", "--workers", "2",
           "--env-step", "600", "-s", "0", "--exp-name", str(out), "--set", "policy.eval.evaluator.confirm_episode=0",
           "--set", "env.n_evaluator_episode=2", "--set", "env.evaluator_env_num=2",
           "--set", "policy.eval.evaluator.eval_freq_envstep=200", "--set", "env.stop_value=1000000000.0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, STRIDE_TEST_RUN=str(tmp_path)))
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"best config: {out / 'best_config.py'}" in done.stdout
    study = optuna.load_study(study_name="cartpole_dqn", storage=f"sqlite:///{out / 'study.db'}")
    finished = [t for t in study.trials if t.state.is_finished()]
    assert 4 <= len(finished) <= 5 and all(t.state == optuna.trial.TrialState.COMPLETE for t in finished)
    spans = sorted((t.datetime_start, t.datetime_complete) for t in finished)
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:]))  # some trial started before the previous one ended
    assert study.trials[0].params["learn.learning_rate"] == 3e-3  # the config itself is still trial 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [p for p in psutil.process_iter(["pid", "cmdline", "environ"])
                if tag in (f"{k}={v}" for k, v in (p.info["environ"] or {}).items())]
        if not left:
            break
        time.sleep(0.5)
    assert not left, [p.info["cmdline"][:3] for p in left]


def test_workers_on_a_cluster_need_a_shared_storage(tmp_path):
    with pytest.raises(ConfigError, match="need a storage every node reaches"):
        tune_pipeline(_cheap(), trials=2, out_dir=str(tmp_path), workers=2, address="127.0.0.1:6379")
    with pytest.raises(ConfigError, match="workers must be >= 1"):
        tune_pipeline(_cheap(), trials=2, out_dir=str(tmp_path), workers=0)


def _tune(cwd, *args: str) -> subprocess.CompletedProcess:
    cmd = [*STRIDE, "-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "2",
           "--env-step", "200", *args]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def _one_error_line(p: subprocess.CompletedProcess) -> str:
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("stride: error: "), p.stderr[-3000:]
    return lines[0]


@pytest.mark.parametrize("args, shown", [
    (["--set", "policy.learn.batch_sise=3"], "unknown config key 'policy.learn.batch_sise' (did you mean "
                                             "'policy.learn.batch_size'?)"),
    (["--storage", "nosuchdb://x"], "storage 'nosuchdb://x' cannot be opened (NoSuchModuleError"),
    (["--storage", "sqlite:////nonexistent/dir/x.db"], "the folder '/nonexistent/dir' does not exist; valid choices: "
                                                       "sqlite:///PATH"),
], ids=["mistyped-key", "unknown-dialect", "sqlite-folder"])
def test_bad_input_fails_in_one_line_before_any_trial_or_folder(args, shown, tmp_path):
    """A real process: one line on stderr, exit 2, no traceback, and no study folder made."""
    assert shown in _one_error_line(_tune(tmp_path, *args))
    assert os.listdir(tmp_path) == []


def test_a_changed_value_of_a_searched_key_is_refused_before_any_trial(tmp_path, capsys):
    """Rerunning a study with ``--set`` moving a searched choice outside the study's choices: Optuna
    refuses every trial (83 lines); here one line, exit 2, before any trial."""
    out = tmp_path / "t"
    assert cli_main(["-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "1", "--trial-cpu", "0.01",
                     "--env-step", "100", "--exp-name", str(out), "--set", "env.n_evaluator_episode=2"]) == 0
    before = sorted(os.listdir(out)), sorted(os.listdir(out / "trials"))
    line = _one_error_line(_tune(tmp_path, "--trial-cpu", "0.01", "--exp-name", str(out),
                                 "--set", "env.n_evaluator_episode=2", "--set", "policy.learn.batch_size=48"))
    assert "searched policy.learn.batch_size over the choices 16, 32, 64, 128, 256; this config's " \
           "policy.learn.batch_size=48 is not one of them" in line
    assert (sorted(os.listdir(out)), sorted(os.listdir(out / "trials"))) == before
    assert len(optuna.load_study(study_name="cartpole_dqn", storage=f"sqlite:///{out / 'study.db'}").trials) == 1
