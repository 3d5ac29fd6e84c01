"""Soak: ``stride -m parallel`` for N minutes with a collector SIGKILLed every minute (issue 31).

    python benchmarks/parallel/soak.py                        # 20 minutes, the zoo's CartPole DQN
    python benchmarks/parallel/soak.py --minutes 3 --out /tmp/soak.txt

The zoo's parallel CartPole DQN (2 collector actors, a replay actor, a learner) with an unreachable
stop value and a 10^9 env-step limit runs as a user runs it (``python -m stride -m parallel``, its
own process group). Every ``--kill-every`` seconds one collector actor (taking turns) is SIGKILLed
and the kill is waited on until the coordinator reports it (its log), so no kill is lost to a
restart in progress. Once a minute, every process of the run (the driver and all its descendants:
Ray's GCS, raylet, dashboard agents, the actors' workers, the watchdog) is sampled from /proc:
resident memory (``psutil``'s RSS) and open file descriptors (``/proc/PID/fd``), and the
coordinator's latest counts (its log line every 100 batches: batches received, stored, gaps,
batches lost in killed collectors). At the end the run gets Ctrl-C (SIGINT to its group), and
its ``result.json`` is the final account.

Printed: a table (minute, processes, RSS and open fds of Stride's processes -- the driver, its
watchdog, the actors' workers -- and of Ray's own -- GCS, raylet, agents --, the open fds of Ray's
log monitor apart, batches sent / stored / lost, where sent = received + lost in dead collectors and
lost = lost in dead collectors + gaps), then the checks:

- **memory flat**: the least-squares slope of Stride's processes' RSS over the last half of the
  minutes (at least 3 samples; the first half holds the replay buffer filling and the warm-up) is
  at most ``--rss-slope-mb`` MiB per minute (default 8: one collector's restart moves RSS by a few
  MiB);
- **Ray's own memory flat**: the same slope of Ray's own processes' RSS is at most
  ``--ray-rss-slope-mb`` MiB per minute (default 2: a minute's kill leaves the GCS a dead actor's
  and a dead worker's records, a few KiB, and Ray's Python agents move by a MiB or so between
  samples; with Ray's default task events the GCS grew 20-35 MiB/min, which this catches). The GCS
  server's and the raylet's RSS are printed apart, to show which one grows;
- **open files flat**: the same slope of the open fds of Stride's processes, and of Ray's own but
  the log monitor, is at most ``--fd-slope`` per minute (default 2), and the process count's
  last-half spread is at most 3 (a restart in flight). Ray's log monitor keeps each dead worker's
  two log files open until ``RAY_LOG_MONITOR_MAX_OPEN_FILES`` (200) are, then closes them all: its
  fds are checked against that cap, not for flatness (20 minutes is 40 of them);
- **every batch accounted for** (``result.json``): ``batches_stored + gaps == batches`` (each batch
  received is stored or counted as a gap), ``duplicates == 0``, the collector deaths counted equal
  the kills made, and ``lost_batches == collector deaths + gaps``: stored + counted lost = sent;
- the run exits 130 (Ctrl-C) with every process of it gone within 60 s.

Exit 0 when every check holds, 1 otherwise; ``--out`` writes the same text to a file.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import psutil

ROOT = Path(__file__).resolve().parents[2]
#: ``stride`` run as its console script runs ``main()``, not ``python -m stride``, whose exit code CPython
#: can turn into a death by SIGINT (tests/entry/stride_process.py says when)
STRIDE = [sys.executable, "-c", "import sys; from stride.entry.cli import main; sys.exit(main())"]
LINE = re.compile(r"batches=(\d+) .*stored=(\d+) duplicates=(\d+) gaps=(\d+) lost_in_collectors=(\d+)")


def _alive(proc: psutil.Process) -> bool:
    """True while ``proc`` runs; a zombie, or one gone between two probes, is not (tests/processes.py's rule)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def write_config(folder: Path) -> Path:
    """The zoo's parallel CartPole DQN, its stop value unreachable and its evaluations rare."""
    sys.path.insert(0, str(ROOT))
    from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par

    main = copy.deepcopy(par.main_config)
    main["env"]["stop_value"] = 1e9
    main["policy"]["eval"]["evaluator"]["eval_freq_envstep"] = 50_000
    path = folder / "cfg.py"
    path.write_text(f"main_config = {main!r}\ncreate_config = {par.create_config!r}\n"
                    f"system_config = {par.system_config!r}\n")
    return path


def run_processes(driver: psutil.Process) -> List[psutil.Process]:
    """The driver and every process under it (Ray's own, the actors' workers, the watchdog)."""
    try:
        return [driver, *driver.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def is_stride(p: psutil.Process, driver: psutil.Process) -> bool:
    """Stride's processes: the driver, its watchdog and the actors' workers (``ray::...``); the
    rest are Ray's own (GCS, raylet, log monitor, dashboard and runtime-env agents, ``ray start``)."""
    cmd = " ".join(p.cmdline())
    return p.pid == driver.pid or cmd.startswith("ray::") or "stride.entry.parallel.watchdog" in cmd


def sample(driver: psutil.Process) -> Tuple[int, float, float, int, int, int, float, float]:
    """(processes, RSS MiB of Stride's processes, of Ray's own, open fds of Stride's, of Ray's own
    but its log monitor, of the log monitor, RSS MiB of the GCS server, of the raylet) of the run,
    read from /proc now."""
    count, rss, fds, monitor, own = 0, [0, 0], [0, 0], 0, {"gcs_server": 0, "raylet": 0}
    for p in run_processes(driver):
        try:
            side = 0 if is_stride(p, driver) else 1
            n = len(os.listdir(f"/proc/{p.pid}/fd"))
            size = p.memory_info().rss
            rss[side] += size
            exe = os.path.basename(p.cmdline()[0]) if p.cmdline() else ""
            if exe in own:
                own[exe] += size
            if "log_monitor" in " ".join(p.cmdline()):
                monitor += n
            else:
                fds[side] += n
            count += 1
        except (psutil.NoSuchProcess, psutil.ZombieProcess, FileNotFoundError, PermissionError):
            continue
    mib = 2 ** 20
    return count, rss[0] / mib, rss[1] / mib, fds[0], fds[1], monitor, own["gcs_server"] / mib, own["raylet"] / mib


def counts(log: Path) -> Tuple[int, int, int, int, int]:
    """The coordinator's latest (batches, stored, duplicates, gaps, lost in collectors) line."""
    found = LINE.findall(log.read_text()) if log.exists() else []
    return tuple(int(x) for x in found[-1]) if found else (0, 0, 0, 0, 0)  # type: ignore[return-value]


def collectors(driver: psutil.Process) -> List[psutil.Process]:
    out = []
    for p in run_processes(driver)[1:]:
        try:
            if "CollectorRole" in " ".join(p.cmdline()):
                out.append(p)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return out


def wait_for(cond, timeout: float, proc: subprocess.Popen, what: str):
    """Poll ``cond`` (an event: a process, a log line) until true; the run ending or ``timeout`` fails."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        if proc.poll() is not None:
            raise SystemExit(f"soak: the run ended (rc {proc.returncode}) while waiting for {what}")
        time.sleep(0.5)
    raise SystemExit(f"soak: timed out ({timeout:.0f} s) waiting for {what}")


def slope(ys: Sequence[float]) -> float:
    """Least-squares slope of ``ys`` against 0, 1, 2, ... (per sample: per minute here)."""
    n = len(ys)
    mx, my = (n - 1) / 2, sum(ys) / n
    den = sum((x - mx) ** 2 for x in range(n))
    return sum((x - mx) * (y - my) for x, y in enumerate(ys)) / den if den else 0.0


def soak(minutes: int, kill_every: float, rss_slope_mb: float, ray_rss_slope_mb: float, fd_slope: float,
         keep: Optional[str]) -> Tuple[str, bool]:
    folder = Path(keep or tempfile.mkdtemp(prefix="stride_soak_"))
    folder.mkdir(parents=True, exist_ok=True)
    exp, log = folder / "exp", folder / "exp" / "log" / "coordinator.txt"
    cmd = [*STRIDE, "-m", "parallel", "-c", str(write_config(folder)), "-s", "0",
           "--exp-name", str(exp), "--no-progress", "--env-step", str(10 ** 9)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stderr = open(folder / "stderr.txt", "w")
    proc = subprocess.Popen(cmd, cwd=folder, stdout=subprocess.DEVNULL, stderr=stderr, env=env, start_new_session=True)
    driver = psutil.Process(proc.pid)
    rows: List[Tuple[int, ...]] = []
    kills = 0
    try:
        wait_for(lambda: len(collectors(driver)) == 2 and counts(log)[0] > 0, 600, proc, "two collectors and 100 batches")
        t0 = time.monotonic()
        for minute in range(1, minutes + 1):
            for _ in range(max(1, round(60 / kill_every))):
                victims = wait_for(lambda: collectors(driver), 300, proc, "a collector actor")
                victims[kills % len(victims)].send_signal(signal.SIGKILL)
                kills += 1
                wait_for(lambda: log.read_text().count(" died (") >= kills, 300, proc, f"kill {kills} to be reported")
                time.sleep(max(0.0, t0 + minute * 60 - time.monotonic()) if kill_every >= 60 else kill_every)
            now = sample(driver)
            batches, stored, _, gaps, lost = counts(log)
            rows.append((minute, *now, batches + lost, stored, lost + gaps))  # type: ignore[arg-type]
            print(f"minute {minute}: {now} {batches} batches", file=sys.stderr, flush=True)
        pids = run_processes(driver)
        os.killpg(proc.pid, signal.SIGINT)
        rc = proc.wait(300)
        deadline = time.monotonic() + 60
        alive = pids
        while alive and time.monotonic() < deadline:
            alive = [p for p in alive if _alive(p)]
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
        stderr.close()
    result = json.loads((exp / "result.json").read_text()) if (exp / "result.json").exists() else {}
    return report(rows, result, rc, alive, kills, rss_slope_mb, ray_rss_slope_mb, fd_slope, folder)


def report(rows, result: Dict[str, object], rc: int, alive: list, kills: int, rss_slope_mb: float,
           ray_rss_slope_mb: float, fd_slope: float, folder: Path) -> Tuple[str, bool]:
    out = [f"soak: stride -m parallel, CartPole DQN (2 collectors, replay, learner), a collector SIGKILLed "
           f"{kills} times; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load {os.getloadavg()[0]:.1f} "
           f"on {os.cpu_count()} cores; run folder {folder}",
           "RSS and open fds summed over the run's processes from /proc: 'stride' = the driver, its watchdog and "
           "the actors' workers; 'ray' = Ray's own (GCS, raylet, agents, ray start), 'gcs' and 'raylet' its GCS "
           "server's and raylet's part of it; 'logmon' = Ray's log monitor's open fds", "",
           f"{'minute':>6} {'procs':>5} {'RSS stride':>10} {'RSS ray':>8} {'gcs':>5} {'raylet':>6} {'fds stride':>10} "
           f"{'fds ray':>7} {'fds logmon':>10} {'sent':>7} {'stored':>7} {'lost':>5}"]
    out += [f"{m:>6} {n:>5} {rs:>10.0f} {rr:>8.0f} {rg:>5.0f} {rl:>6.0f} {fs:>10} {fr:>7} {fm:>10} {sent:>7} "
            f"{stored:>7} {lost:>5}" for m, n, rs, rr, fs, fr, fm, rg, rl, sent, stored, lost in rows]
    tail = rows[len(rows) // 2:] if len(rows) >= 6 else rows[-3:]
    slopes = {name: slope([r[col] for r in tail]) for name, col in
              (("rss_stride", 2), ("rss_ray", 3), ("fds_stride", 4), ("fds_ray", 5), ("fds_logmon", 6), ("rss_gcs", 7),
               ("rss_raylet", 8))}
    spread = max(r[1] for r in tail) - min(r[1] for r in tail) if tail else 0
    batches = int(result.get("batches", -1))  # type: ignore[call-overload]
    stored, gaps = int(result.get("batches_stored", -1)), int(result.get("gaps", -1))  # type: ignore[call-overload]
    deaths = len(result.get("collector_restarts", []))  # type: ignore[arg-type]
    lost = int(result.get("lost_batches", -1))  # type: ignore[call-overload]
    cap = int(os.environ.get("RAY_LOG_MONITOR_MAX_OPEN_FILES", "200"))
    from stride.entry.parallel.cluster import local_settings  # (ROOT is on sys.path: write_config)

    settings = {k: v for k, v in local_settings().items() if k != "RAY_worker_niceness"}  # what the run's Ray got
    checks = [
        (f"memory flat (Stride's processes): RSS slope over the last {len(tail)} minutes "
         f"{slopes['rss_stride']:+.2f} MiB/min <= {rss_slope_mb}", len(tail) >= 3 and slopes["rss_stride"] <= rss_slope_mb),
        (f"memory flat (Ray's own): RSS slope over the last {len(tail)} minutes {slopes['rss_ray']:+.2f} MiB/min <= "
         f"{ray_rss_slope_mb} (GCS server {slopes['rss_gcs']:+.2f}, raylet {slopes['rss_raylet']:+.2f})",
         len(tail) >= 3 and slopes["rss_ray"] <= ray_rss_slope_mb),
        (f"open files flat (Stride's processes): fd slope {slopes['fds_stride']:+.2f}/min <= {fd_slope}; Ray's "
         f"own but its log monitor: {slopes['fds_ray']:+.2f}/min <= {fd_slope}; process count spread {spread} <= 3",
         len(tail) >= 3 and slopes["fds_stride"] <= fd_slope and slopes["fds_ray"] <= fd_slope and spread <= 3),
        (f"Ray's log monitor: {max(r[6] for r in rows) if rows else 0} fds at most, within Ray's cap "
         f"RAY_LOG_MONITOR_MAX_OPEN_FILES={cap} (+ ~15 of its own); it keeps a dead worker's 2 log files open until "
         f"the cap, then closes them all: slope {slopes['fds_logmon']:+.2f}/min, bounded",
         bool(rows) and max(r[6] for r in rows) <= cap + 20),
        (f"every batch accounted: result.json batches {batches} = stored {stored} + gaps {gaps}; duplicates "
         f"{result.get('duplicates')}", batches > 0 and stored + gaps == batches and result.get("duplicates") == 0),
        (f"every kill counted: collector deaths {deaths} = kills {kills}; lost_batches {lost} = deaths + gaps "
         f"{deaths + gaps}; sent {batches + deaths} = stored {stored} + lost {lost}",
         deaths == kills and lost == deaths + gaps and stored + lost == batches + deaths),
        (f"Ctrl-C: exit {rc} (130 expected), processes left after 60 s: {len(alive)}", rc == 130 and not alive),
    ]
    out += ["", f"env steps {result.get('env_step')}, train_iter {result.get('train_iter')}, replay restarts "
            f"{result.get('replay_restarts')}; Ray's settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()),
            ""]
    out += [f"{'PASS' if ok else 'FAIL'}  {text}" for text, ok in checks]
    return "\n".join(out) + "\n", all(ok for _, ok in checks)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=20)
    parser.add_argument("--kill-every", type=float, default=60.0, help="seconds between collector kills")
    parser.add_argument("--rss-slope-mb", type=float, default=8.0, help="most MiB per minute RSS may grow (last half)")
    parser.add_argument("--ray-rss-slope-mb", type=float, default=2.0,
                        help="most MiB per minute Ray's own processes' RSS may grow (last half)")
    parser.add_argument("--fd-slope", type=float, default=2.0, help="most open fds per minute may grow (last half)")
    parser.add_argument("--dir", default=None, help="the run's folder (default: a new temporary one)")
    parser.add_argument("--out", default=None, help="also write the report here")
    args = parser.parse_args(argv)
    text, ok = soak(args.minutes, args.kill_every, args.rss_slope_mb, args.ray_rss_slope_mb, args.fd_slope, args.dir)
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
