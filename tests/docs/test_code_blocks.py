"""Every code block of the docs runs (issue 33): the docs cannot rot.

The fenced ```bash and ```python blocks of ``docs/**/*.md`` and ``README.md`` are run as written, page
by page, in a fresh temporary folder per page, with this checkout's ``stride`` first on ``PATH`` and on
``PYTHONPATH``. A page's blocks run in their order; consecutive blocks of one language run as one
script (one bash, one Python process: the second Python block of a page uses the first's names, as a
reader typing them into one session would). ```text blocks are output and ```mermaid blocks diagrams:
not run. A block that cannot run here (a cluster, a GPU, ``pip install`` into this environment, a
run of minutes) has the line ``<!-- docs-test: skip (REASON) -->`` right above it; each is reported as
a skipped test with its reason (``pytest -ra`` lists them), and a marker without a reason, or one
that precedes no block, fails; a skipped block's ``stride`` commands are still parsed with today's
flags and their zoo names resolved, and the extras its ``pip install`` names must exist. The docs'
learning runs carry budgets of seconds a reader drops or raises (``--env-step 500``, ``max_env_step=500``), so the pages take about four minutes of CPU, a
test per page (pytest-xdist runs two at a time). Where a page's run is the one a test used to make (the zoo's parallel CartPole DQN to
its stop value, two learner replicas under torchrun, the smoke runs of the zoo's reward-model and
demonstration configs), :data:`CHECKS` holds that test's assertions on the files and output the
page's blocks left, so CI makes the run once.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import pytest

from tests.entry.parallel.results import check_ratio_bounds

ROOT = Path(__file__).resolve().parents[2]
#: what a fenced block's language may be: run (bash, python) or shown only (text, mermaid)
RUN = ("bash", "python")
SHOWN = ("text", "mermaid")
FENCE = re.compile(r"^```(\S*)\s*$")
SKIP = re.compile(r"^<!-- docs-test: skip(?: \((.*)\))? -->$")
#: the longest a page's blocks may take together (a learning run at the docs' budgets takes seconds)
PAGE_TIMEOUT = 240


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: Optional[str]  # the reason, when marked skip


def pages() -> List[Path]:
    """The pages whose blocks run: every Markdown file of the site, and the README."""
    return sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def parse(path: Path) -> Tuple[List[Block], List[str]]:
    """The fenced blocks of ``path``, and what is wrong with its markers and fences."""
    page = path.relative_to(ROOT).as_posix()
    lines = path.read_text().split("\n")
    blocks: List[Block] = []
    errors: List[str] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if SKIP.match(lines[i].strip()) and not (i + 1 < len(lines) and FENCE.match(lines[i + 1])):
                errors.append(f"{page}:{i + 1}: a docs-test marker must stand right above a code block")
            i += 1
            continue
        lang, start = m.group(1), i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        if end is None:
            errors.append(f"{page}:{start + 1}: code block never closed")
            break
        marker = SKIP.match(lines[start - 1].strip()) if start else None
        reason = (marker.group(1) or "").strip() if marker else None
        if lang not in RUN + SHOWN:
            errors.append(f"{page}:{start + 1}: code block language {lang!r}; valid: {', '.join(RUN + SHOWN)}")
        elif marker and not reason:
            errors.append(f"{page}:{start + 1}: a skipped block must say why: <!-- docs-test: skip (REASON) -->")
        elif marker and lang in SHOWN:
            errors.append(f"{page}:{start + 1}: a {lang} block is never run; it needs no skip marker")
        blocks.append(Block(page, start + 1, lang, "\n".join(lines[start + 1:end]) + "\n", reason))
        i = end + 1
    return blocks, errors


def scripts(blocks: List[Block]) -> List[Tuple[str, str, int]]:
    """A page's runnable blocks as (language, script, first line): consecutive blocks of one language
    joined."""
    out: List[Tuple[str, str, int]] = []
    for b in blocks:
        if b.lang not in RUN or b.skip is not None:
            continue
        if out and out[-1][0] == b.lang:
            out[-1] = (b.lang, out[-1][1] + b.code, out[-1][2])
        else:
            out.append((b.lang, b.code, b.line))
    return out


ALL = {p.relative_to(ROOT).as_posix(): parse(p) for p in pages()}
RUNNABLE = [page for page, (blocks, _) in ALL.items() if scripts(blocks)]
SKIPPED = [b for blocks, _ in ALL.values() for b in blocks if b.skip is not None]


def test_every_block_is_runnable_or_says_why_not():
    errors = [e for _, errs in ALL.values() for e in errs]
    assert not errors, "\n".join(errors)
    assert RUNNABLE, "no runnable code block found under docs/"


def test_the_quickstart_skips_only_its_install_and_every_skip_says_why():
    """The quickstart is what a new user runs: past the install, every block runs in CI; elsewhere a
    skip must give a reason a reader can check (a few words, not a bare marker)."""
    quick = [b for b in SKIPPED if b.page.endswith("quickstart.md")]
    assert len(quick) <= 1 and all("install" in (b.skip or "") or "virtualenv" in (b.skip or "") for b in quick), quick
    terse = [f"{b.page}:{b.line}" for b in SKIPPED if len((b.skip or "").split()) < 3]
    assert not terse, terse


def stride_commands(code: str) -> List[List[str]]:
    """The ``stride`` commands of a block, each as its arguments (comments dropped; ``a && stride ...``
    and ``stride ... && b`` give the ``stride`` part)."""
    commands: List[List[str]] = []
    for line in code.splitlines():
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words and os.path.basename(words[0]) == "stride":
                commands.append(words[1:])
    return commands


def test_the_stride_commands_of_skipped_blocks_parse_with_todays_flags_and_name_zoo_configs():
    """A skipped block is not run, but its ``stride`` commands are what a reader types: each must pass
    the command's own parser and its mode's checks of the flags, and every ``-e``/``-p`` pair must name
    a zoo config, so a renamed flag, mode or config fails here rather than on a user's cluster."""
    from stride.entry.cli import MODES
    from stride.entry.cli_flags import check_flags, parser
    from stride.entry.utils import zoo_config

    checked, errors = 0, []
    for b in SKIPPED:
        for argv in stride_commands(b.code):
            where = f"{b.page}:{b.line}: stride {shlex.join(argv)}"
            try:
                args = parser(MODES).parse_args(argv)
                mode = MODES[args.mode]
                check_flags(mode, args, MODES)
                if mode.check:  # -m dist: --module and -p, before any file is read
                    mode.check(args)
                if args.env and args.policy:
                    zoo_config(args.env, args.policy)
            except (Exception, SystemExit) as e:  # argparse exits on a flag it does not know
                errors.append(f"{where}: {type(e).__name__}: {e}")
            checked += 1
    assert not errors, "\n".join(errors)
    assert checked >= 10, checked  # install.md's zoo commands and ray.md's -m dist recipe at least


def _env(tmp: Path) -> dict:
    """This checkout's ``stride`` (the test's interpreter's scripts first on PATH, the checkout first
    on PYTHONPATH), plots without a display, a private home for caches."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["MPLBACKEND"] = "Agg"
    env["MPLCONFIGDIR"] = str(tmp / ".mpl")
    return env


def run_page(page: str, tmp: Path) -> Optional[str]:
    """Run ``page``'s blocks in ``tmp``, in order, then its :data:`CHECKS`; None when all pass, else
    what failed."""
    env = _env(tmp)
    stdout = ""
    for lang, script, line in scripts(ALL[page][0]):
        cmd = ["bash", "-euo", "pipefail", "-c", script] if lang == "bash" else [sys.executable, "-c", script]
        proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=PAGE_TIMEOUT)
        stdout += proc.stdout
        if proc.returncode != 0:
            return (f"{page}:{line}: the {lang} block(s) exited {proc.returncode}\n--- script\n{script}"
                    f"--- stdout (tail)\n{proc.stdout[-3000:]}\n--- stderr (tail)\n{proc.stderr[-3000:]}")
    try:
        CHECKS.get(page, lambda tmp, out: None)(tmp, stdout)
    except AssertionError as e:
        return f"{page}: its blocks ran, but what they left fails a check: {e}\n--- stdout (tail)\n{stdout[-3000:]}"
    return None


def _result(tmp: Path, run: str) -> dict:
    path = tmp / run / "result.json"
    assert path.is_file(), f"{run}/result.json was not written"
    result: dict = json.loads(path.read_text())
    return result


def _check_parallel(tmp: Path, stdout: str) -> None:
    """ray.md's ``-m parallel`` run: the zoo's parallel CartPole DQN, as shipped, until its stop value
    holds on the 100-episode confirmation (DQN 195 in ~1-2k env steps); no batch stored twice, every
    batch sent stored, the replay ratio's limiter within its bounds."""
    result = _result(tmp, "cartpole_dqn_parallel_seed0")
    assert result["stop"] and result["eval_return"] >= 195, result
    assert result["duplicates"] == 0 and result["batches_stored"] == result["batches"], result
    check_ratio_bounds(result)
    assert "cartpole_dqn_parallel_seed0 already finished" in stdout  # the resume of a finished run


def _check_replicas(tmp: Path, stdout: str) -> None:
    """serial.md's torchrun block: two learner replicas trained together; rank 0 alone wrote the
    experiment folder and reported; the saved config has the user's seed, not rank 1's."""
    exp = tmp / "cartpole_dqn_replicas"
    result = _result(tmp, exp.name)
    assert result["env_step"] >= 300 and result["train_iter"] > 0 and result["eval_return"] is not None, result
    assert result["replicas"] == 2 and (tmp / result["final_checkpoint"]).exists(), result
    assert sorted(p.name for p in tmp.glob("cartpole_dqn_replicas*")) == [exp.name]  # one folder: rank 0's
    assert stdout.count(f"stride: results in {exp}") == 1  # rank 1 trained but reports nothing
    assert json.loads((exp / "total_config.json").read_text())["seed"] == 0


def _checkpoint(tmp: Path, result: dict) -> dict:
    import torch

    state: dict = torch.load(tmp / result["final_checkpoint"], weights_only=True)
    return state


def _check_reward_models(tmp: Path, stdout: str) -> None:
    """reward_model.md's three runs (tests/zoo/test_minigrid_rnd.py's smoke run of the command was this
    one): each reached its budget; PPO + RND's checkpoint holds the reward model, whose observation
    normaliser saw every collected step, and PPO's second value head (the intrinsic return's)."""
    for run in ("bitflip_dqn_her_seed0", "doorkey_ppo_rnd_seed0", "fetchreach_sac_her_seed0"):
        assert _result(tmp, run)["env_step"] >= 1000, run
    rnd = _result(tmp, "doorkey_ppo_rnd_seed0")
    assert rnd["train_iter"] >= 1, rnd
    state = _checkpoint(tmp, rnd)
    assert state["components"]["reward_model"]["networks"]["obs_norm.count"].item() == rnd["env_step"]
    assert state["policy"]["model"]["critic_head.1.weight"].shape[0] == 2


def _check_demonstrations(tmp: Path, stdout: str) -> None:
    """demonstrations.md's chain, the zoo's demonstration configs' smoke runs (tests/zoo's CartPole GAIL,
    BC and SQIL runs and MountainCar's R2D3 run were these): GAIL (n-step 1) and SQIL trained on the PPO
    expert's dataset, GAIL's folder of the plain name (the rerun tests/entry/test_run_folders.py made
    after a run that failed); BC trained on all 10 episodes, no env step; the scripted MountainCar
    expert reached the flag in each episode with actions 0 and 2 only; R2D3 stored and drew
    demonstration sequences, on MountainCar's and on CartPole-POMDP's R2D2 expert's."""
    from stride.data.demo import load_demo_dataset

    gail = _result(tmp, "cartpole_dqn_gail_seed0")
    assert gail["env_step"] >= 500 and gail["train_iter"] > 0, gail
    assert sorted(p.name for p in tmp.glob("cartpole_dqn_gail*")) == ["cartpole_dqn_gail_seed0"]
    cfg = json.loads((tmp / "cartpole_dqn_gail_seed0" / "total_config.json").read_text())
    assert cfg["reward_model"]["type"] == "gail" and cfg["policy"].get("nstep", 1) == 1
    bc = _result(tmp, "cartpole_bc_seed0")
    assert bc["train_iter"] == 200 and bc["env_step"] == 0, bc
    assert stdout.count("wrote 10 episodes") == 2  # collect_demo: the PPO expert's, the R2D2 expert's
    assert bc["dataset"]["episodes"] == 10 and bc["dataset"]["transitions"] == len(
        load_demo_dataset(str(tmp / "cartpole_expert_demo"))), bc
    sqil = _result(tmp, "cartpole_sqil_seed0")
    assert sqil["env_step"] >= 500 and sqil["train_iter"] > 0, sqil
    expert = load_demo_dataset(str(tmp / "mountaincar_expert_demo"))
    assert len(expert.lengths) == 10 and (expert.lengths < 150).all(), expert.lengths
    assert expert.columns["terminated"][np.cumsum(expert.lengths) - 1].all()  # each episode ends at the flag
    assert set(np.unique(expert.columns["action"]).tolist()) == {0, 2}
    for run in ("cartpole_pomdp_r2d3_seed0", "mountaincar_r2d3_seed0"):
        result = _result(tmp, run)
        assert result["env_step"] >= 1000 and result["train_iter"] > 0, result
        demo = _checkpoint(tmp, result)["components"]["buffer"]["demo"]["monitor"]
        assert demo["push"] > 0 and demo["sample"] > 0, (run, demo)


def _check_league(tmp: Path, stdout: str) -> None:
    """league.md's run with two Ray collectors: both collectors' games reached the learner, none twice,
    none lost, no collector restarted."""
    ray = _result(tmp, "tictactoe_league_ray")
    assert ray["workers"] == 2 and ray["env_step"] >= 1000 and ray["train_iter"] > 0, ray
    assert sorted(ray["batches_by_collector"]) == ["collector0", "collector1"], ray["batches_by_collector"]
    assert all(n > 0 for n in ray["batches_by_collector"].values()), ray["batches_by_collector"]
    assert ray["duplicates"] == 0 and ray["lost_batches"] == 0 and ray["collector_restarts"] == [], ray
    assert ray["games_recorded"] > 0, ray


#: a page -> the assertions on what its blocks left (its folder, its stdout): a test's, where the page
#: makes the run that test made
CHECKS: Dict[str, Callable[[Path, str], None]] = {
    "docs/pipelines/demonstrations.md": _check_demonstrations,
    "docs/pipelines/league.md": _check_league,
    "docs/pipelines/ray.md": _check_parallel,
    "docs/pipelines/reward_model.md": _check_reward_models,
    "docs/pipelines/serial.md": _check_replicas,
}


@pytest.mark.parametrize("page", RUNNABLE)
def test_page_blocks_run(page: str, tmp_path: Path):
    """A page's blocks in a fresh folder. The pages are independent: pytest-xdist's two test processes
    (pyproject.toml) run two at a time, beside the other tests."""
    failure = run_page(page, tmp_path)
    assert failure is None, failure


def test_the_zoo_page_shows_every_zoo_config():
    """docs/zoo.md renders each config's docstring; a config added to the zoo must be added there."""
    zoo = (ROOT / "docs" / "zoo.md").read_text()
    configs = sorted((ROOT / "stride" / "zoo").glob("*/config/**/*_config.py"))
    assert configs
    missing = [c.relative_to(ROOT).as_posix() for c in configs
               if f"::: {c.relative_to(ROOT).with_suffix('').as_posix().replace('/', '.')}\n" not in zoo]
    assert not missing, f"docs/zoo.md lacks these configs: {missing}"


def check_extras_commands() -> Dict[str, List[str]]:
    """tools/check_extras.sh's table: an extra (``core``: none) -> the ``stride`` commands CI runs with
    that extra alone in a fresh virtualenv, their budget flags dropped (:func:`unbudgeted`)."""
    table = re.findall(r'^  \[([\w-]+)\]="(.*)"$', (ROOT / "tools" / "check_extras.sh").read_text(), re.M)
    return {extra: [unbudgeted(c) for c in cmd.replace("\\$", "$").split("&&") if c.strip().startswith("stride ")]
            for extra, cmd in table}


def unbudgeted(command: str) -> str:
    """A ``stride`` command without its comment and the flags a reader sets to taste (``--env-step N``,
    ``-s SEED ...``, ``--no-progress``): what is left names the run."""
    kept: List[str] = []
    dropping = False
    for w in shlex.split(command.split("#")[0]):
        if w in ("--env-step", "-s", "--no-progress"):
            dropping = w != "--no-progress"
        elif not (dropping and w.isdigit()):
            kept.append(w)
            dropping = False
    return " ".join(kept)


def test_every_install_block_runs_in_ci_as_tools_check_extras():
    """An install block is not run by this test (it would install into this environment): CI runs it
    instead, through tools/check_extras.sh beside the tests: each extra a block installs, alone in a
    fresh virtualenv, then the command the docs run with it (install.md's lines; a pipeline page's
    next block) at a tiny budget. So every extra a block installs is one of pyproject.toml's and has
    check_extras' command for the docs' own; `-e .` alone is its ``core``; the test extra's block is
    CI's own first step, verbatim."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    table = check_extras_commands()
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^[^#]*tools/check_extras\.sh(['\s]|$)(?!\s*\w)", ci, re.M), ".ci/run must run tools/check_extras.sh, all of it"
    assert set(table) - {"core"} <= set(extras), sorted(set(table) - set(extras))
    wrong: List[str] = []
    checked = 0
    for page, (blocks, _) in ALL.items():
        for i, b in enumerate(blocks):
            if "pip install" not in b.code or b.lang != "bash":
                continue
            for line in b.code.strip().splitlines():
                m = re.search(r"pip install[^&]* -e '?\.(?:\[([\w,-]+)\])?'?(?:\s|$)", line)
                if not m:
                    wrong.append(f"{page}:{b.line}: not the docs' install form: {line}")
                    continue
                named = (m.group(1) or "core").split(",")
                if named == ["test"]:
                    if line.strip() not in ci.splitlines():
                        wrong.append(f"{page}:{b.line}: the test install must be .ci/run's first step verbatim")
                    continue
                if "&& stride " in line:  # install.md's lines: the extra, then its command
                    runs = [unbudgeted(line.split("&&", 1)[1])]
                elif any(n == "core" for n in named):
                    runs = []  # the base install; check_extras' core trains CartPole with it
                else:  # a pipeline page: its next block's first stride command
                    after = [c for c in blocks[i + 1:] if c.lang == "bash"][:1]
                    runs = [unbudgeted(c) for a in after for c in a.code.splitlines() if c.startswith("stride ")][:1]
                for extra in named:
                    if extra not in extras and extra != "core":
                        wrong.append(f"{page}:{b.line}: [{extra}] is not an extra; valid: {sorted(extras)}")
                    elif extra not in table:
                        wrong.append(f"{page}:{b.line}: [{extra}] is not in tools/check_extras.sh, so CI never installs it")
                    else:
                        missing = [r for r in runs if r not in table[extra]]
                        wrong += [f"{page}:{b.line}: check_extras' [{extra}] lacks `{r}`" for r in missing]
                        checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked >= 12, checked
