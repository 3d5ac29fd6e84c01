"""Driver of the DQN CartPole speed benchmark (issue 2). Run through ``run.sh``.

Per seed, each contestant runs in its own fresh process (clean CPU accounting and RNG):
  stride  -- ``serial_pipeline`` on ``stride.zoo.cartpole.config.cartpole_dqn_config`` (``bench_common.stride_run``)
  floor   -- bare PyTorch + NumPy loop doing Stride's counts for that seed (env steps, gradient
             steps, batch size, sizes, target sync) -> Stride's framework overhead
  sb3     -- stable-baselines3 DQN with rl-zoo3's CartPole-v1 hyper-parameters, same stop rule
             (``bench_common.sb3_run``)
then the collector throughput bench (Stride ``SampleCollector`` vs a bare loop), alternated
``--collector-reps`` times. Prints the report and writes it to
``benchmarks/results/dqn_<date>.txt`` (raw JSON and per-process logs next to it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics

from bench_common.driver import (Runner, add_common_args, fmt, get, median_or_inf, start, stride_eval_settings, uptime,
                                 verdict)

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = "stride.zoo.cartpole.config.cartpole_dqn_config"


def floor_spec(stride_run: dict) -> dict:
    res, tc = stride_run["result"], stride_run["total_config"]
    eps = get(tc, "policy.other.eps", {}) or {}
    spec = {
        "env_id": get(tc, "env.env_id", "CartPole-v1"),
        "env_step": res["env_step"], "train_iter": res["train_iter"],
        "collector_env_num": get(tc, "env.collector_env_num"),
        "encoder_hidden_size_list": get(tc, "policy.model.encoder_hidden_size_list"),
        "dueling": get(tc, "policy.model.dueling"),
        "head_layer_num": get(tc, "policy.model.head_layer_num", 1),
        "batch_size": get(tc, "policy.learn.batch_size"),
        "update_per_collect": get(tc, "policy.learn.update_per_collect"),
        "n_sample": get(tc, "policy.collect.n_sample"),
        "target_update_freq": get(tc, "policy.learn.target_update_freq"),
        "nstep": get(tc, "policy.nstep"), "discount_factor": get(tc, "policy.discount_factor"),
        "learning_rate": get(tc, "policy.learn.learning_rate"),
        "replay_buffer_size": get(tc, "policy.other.replay_buffer.replay_buffer_size"),
        "eps_start": eps.get("start"), "eps_end": eps.get("end"), "eps_decay": eps.get("decay"), "eps_type": eps.get("type"),
    }
    tut = get(tc, "policy.learn.target_update_type", "assign")
    if tut != "assign":
        spec["_warning"] = f"Stride used target_update_type={tut!r}; the floor syncs by copy"
    return spec


def summarize(reps: list, cpu_of, counts_of) -> dict:
    """One seed's repetitions: the first run's record plus min / median CPU over all of them."""
    out = dict(reps[0])
    cpus = [cpu_of(r) for r in reps]
    out["cpu_reps"], out["cpu_min"], out["cpu_median"] = cpus, min(cpus), statistics.median(cpus)
    out["nondeterministic"] = len({counts_of(r) for r in reps}) > 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap)
    ap.add_argument("--max-env-steps", type=int, default=100_000, help="cap per run (both contestants)")
    ap.add_argument("--eval-every", type=int, default=None,
                    help="SB3 evaluation period in env steps (default: Stride's eval_freq x n_sample / update_per_collect)")
    ap.add_argument("--only", nargs="+", choices=["stride", "floor", "sb3", "collector"],
                    default=["stride", "floor", "sb3", "collector"])
    ap.add_argument("--reps", type=int, default=5,
                    help="runs per seed of each contestant, interleaved (stride, floor, floor-fused, sb3, ...)")
    ap.add_argument("--collector-steps", type=int, default=40_000)
    ap.add_argument("--collector-reps", type=int, default=3)
    args = ap.parse_args()

    ses = start("dqn", args.stride_ref)
    logdir, up_start = ses.logdir, ses.up_start
    run = Runner(logdir, args.timeout, ses.stride_src, HERE)

    try:
        sd = stride_eval_settings(ses.stride_src, CONFIG)
    except Exception as e:  # noqa: BLE001
        sd = {"stop_value": 195, "n_evaluator_episode": 100, "evaluator_env_num": 8, "env_steps_per_eval": None}
        print(f"(could not read Stride's zoo config: {e!r}; using defaults {sd})")
    eval_every = args.eval_every or int(round(sd["env_steps_per_eval"] or 1000))
    print(f"DQN CartPole benchmark, seeds {args.seeds}, logs in {logdir}\n{up_start}")

    # Every contestant's run of a seed is deterministic (same env steps and gradient steps each
    # time), so repetitions differ only by interference from the rest of this shared machine,
    # which only ever adds CPU time: the minimum over repetitions estimates a run's own cost (as
    # ``timeit`` does); the median over repetitions is printed beside it. Repetitions are
    # interleaved (stride, floor, floor-fused, sb3, stride, ...) so load changes hit all alike.
    stride_runs, floor_runs, fused_runs, sb3_runs = {}, {}, {}, {}
    for s in args.seeds:
        reps = {"stride": [], "floor": [], "fused": [], "sb3": []}
        spec_path = None
        for k in range(args.reps):
            if "stride" in args.only:
                r = run(f"stride_seed{s}_rep{k}", "bench_common.stride_run", "--algo", "dqn", "--seed", s,
                        "--max-env-steps", args.max_env_steps, "--exp-dir", os.path.join(logdir, f"stride_exp_seed{s}_rep{k}"))
                if r:
                    reps["stride"].append(r)
            if spec_path is None and reps["stride"] and "floor" in args.only:
                spec_path = os.path.join(logdir, f"floor_spec_seed{s}.json")
                with open(spec_path, "w") as f:
                    json.dump(floor_spec(reps["stride"][0]), f, indent=1)
            if spec_path:
                for key, extra in (("floor", ()), ("fused", ("--fused-adam",))):
                    r = run(f"{'floor' if key == 'floor' else 'floor_fused'}_seed{s}_rep{k}", "floor_dqn.py", "--seed", s,
                            "--spec", spec_path, *extra)
                    if r:
                        reps[key].append(r)
            if "sb3" in args.only:
                r = run(f"sb3_seed{s}_rep{k}", "bench_common.sb3_run", "--algo", "dqn", "--seed", s,
                        "--max-env-steps", args.max_env_steps,
                        "--eval-every", eval_every, "--eval-episodes", sd["n_evaluator_episode"],
                        "--eval-envs", sd["evaluator_env_num"], "--stop-value", sd["stop_value"],
                        "--confirm-episodes", sd.get("confirm_episode", 0))
                if r:
                    reps["sb3"].append(r)
        if reps["stride"]:
            stride_runs[s] = summarize(reps["stride"], lambda r: r["result"]["train_cpu_seconds"],
                                       lambda r: (r["result"]["env_step"], r["result"]["train_iter"], bool(r["result"]["stop"])))
        if reps["floor"]:
            floor_runs[s] = summarize(reps["floor"], lambda r: r["cpu_seconds"], lambda r: (r["env_step_done"], r["train_iter_done"]))
        if reps["fused"]:
            fused_runs[s] = summarize(reps["fused"], lambda r: r["cpu_seconds"], lambda r: (r["env_step_done"], r["train_iter_done"]))
        if reps["sb3"]:
            sb3_runs[s] = summarize(reps["sb3"], lambda r: r["train_cpu_seconds"], lambda r: (r["env_step"], r["train_iter"], bool(r["stop"])))
    coll = []
    if "collector" in args.only:
        for rep in range(args.collector_reps):
            for model in ("initial", "trained"):
                r = run(f"collector_{model}_rep{rep}", "collector_bench.py", "--steps", args.collector_steps,
                        "--seed", rep, "--model", model)
                if r:
                    coll.append(r)
    up_end = uptime()

    # ---------------------------------------------------------------- report
    L = ses.report_header("Stride DQN CartPole-v1 speed benchmark (issue 2)", up_end)
    p = L.append
    st_any = next((r for r in stride_runs.values() if r), None)
    anyr = next((r for d in (stride_runs, sb3_runs, floor_runs) for r in d.values() if r), None)
    if anyr:
        p(f"torch {anyr.get('torch')}; torch.set_num_threads(1) in every contestant process "
          f"(threads seen: {sorted({r.get('torch_threads') for d in (stride_runs, sb3_runs, floor_runs) for r in d.values() if r})})")
    p("timing: process CPU seconds (time.process_time), never wall time; each contestant in a fresh subprocess")
    p(f"stop rule (both): mean return of a {sd['n_evaluator_episode']}-episode deterministic evaluation on "
      f"{sd['evaluator_env_num']} separate envs >= {sd['stop_value']}, confirmed on {sd.get('confirm_episode', 0)} "
      f"further episodes; cap {args.max_env_steps} env steps per run")
    p(f"evaluation period: Stride every {sd.get('eval_freq_train_iter')} train iters "
      f"(~{fmt(sd.get('env_steps_per_eval'), '{:.0f}')} env steps); SB3 every {eval_every} env steps")
    p("train CPU s = process CPU time of the run minus CPU time inside evaluations "
      "(Stride: its result.json train_cpu_seconds; SB3: measured around each evaluation)")
    sb3_any = next((r for r in sb3_runs.values() if r), None)
    if sb3_any:
        p(f"SB3 {sb3_any['sb3_version']} DQN, rl-zoo3 hyper-parameters read from {sb3_any['hyperparams_file']}:")
        p("  CartPole-v1: " + json.dumps(sb3_any["hyperparams_raw"], sort_keys=True))
        p(f"  n_envs={sb3_any['n_envs']} (rl-zoo3 default when absent); exploration_fraction rescaled to "
          f"{sb3_any['exploration_fraction_used']:.4g} of the {args.max_env_steps}-step cap = rl-zoo3's absolute schedule; "
          f"q-net params {sb3_any['q_net_params']}")
    st_any = next((r for r in stride_runs.values() if r), None)
    if st_any:
        tc = st_any["total_config"]
        keys = ["env.collector_env_num", "policy.model.encoder_hidden_size_list", "policy.model.dueling",
                "policy.learn.batch_size", "policy.learn.update_per_collect", "policy.collect.n_sample",
                "policy.learn.target_update_freq", "policy.nstep", "policy.discount_factor",
                "policy.learn.learning_rate", "policy.other.eps", "policy.other.replay_buffer.replay_buffer_size"]
        p("Stride config used (total_config.json): " + ", ".join(f"{k.split('.')[-1]}={get(tc, k)}" for k in keys))
        p(f"  model params {st_any.get('n_params')}")
    p("")
    p("Per seed: env steps to the stop value, train CPU s as min over repetitions (median in brackets)")
    p(f"{'seed':>4} | {'Stride steps':>12} {'iters':>5} {'train s':>14} | {'floor s':>14} {'overhd':>6} | "
      f"{'fused floor s':>14} {'overhd':>6} | {'SB3 steps':>9} {'iters':>5} {'train s':>14}")

    def cell(run_, key="cpu"):
        return f"{run_['cpu_min']:.2f} ({run_['cpu_median']:.2f})" if run_ else "n/a"

    stats = {k: {"min": [], "median": []} for k in ("st", "sb", "ov", "ovf")}
    st_steps, sb_steps = [], []
    for s in args.seeds:
        st, fl, ff, sb = stride_runs.get(s), floor_runs.get(s), fused_runs.get(s), sb3_runs.get(s)
        st_ok = bool(st and st["result"].get("stop"))
        sb_ok = bool(sb and sb.get("stop"))
        for est in ("min", "median"):
            stats["st"][est].append(st[f"cpu_{est}"] if st_ok else None)
            stats["sb"][est].append(sb[f"cpu_{est}"] if sb_ok else None)
            if st and fl:
                stats["ov"][est].append(st[f"cpu_{est}"] / fl[f"cpu_{est}"])
            if st and ff:
                stats["ovf"][est].append(st[f"cpu_{est}"] / ff[f"cpu_{est}"])
        st_steps.append(st["result"]["env_step"] if st_ok else None)
        sb_steps.append(sb["env_step"] if sb_ok else None)
        row = f"{s:>4} | "
        row += (f"{(st['result']['env_step'] if st_ok else 'not reached'):>12} {st['result']['train_iter']:>5} {cell(st):>14} | "
                if st else f"{'failed':>12} {'':>5} {'':>14} | ")
        row += f"{cell(fl):>14} {(st['cpu_min'] / fl['cpu_min']) if st and fl else float('nan'):>6.2f} | "
        row += f"{cell(ff):>14} {(st['cpu_min'] / ff['cpu_min']) if st and ff else float('nan'):>6.2f} | "
        row += (f"{(sb['env_step'] if sb_ok else 'not reached'):>9} {sb['train_iter']:>5} {cell(sb):>14}" if sb else f"{'failed':>9}")
        p(row)
    p(f"{'med':>4} | {fmt(median_or_inf(st_steps), '{:.0f}'):>12} {'':>5} {fmt(median_or_inf(stats['st']['min']), '{:.2f}'):>14} | "
      f"{'':>14} {fmt(statistics.median(stats['ov']['min']) if stats['ov']['min'] else None, '{:.2f}'):>6} | "
      f"{'':>14} {fmt(statistics.median(stats['ovf']['min']) if stats['ovf']['min'] else None, '{:.2f}'):>6} | "
      f"{fmt(median_or_inf(sb_steps), '{:.0f}'):>9} {'':>5} {fmt(median_or_inf(stats['sb']['min']), '{:.2f}'):>14}")
    p("(overhd = Stride train CPU s / floor CPU s for the same seed's env steps and gradient steps; the floor uses "
      "torch's default Adam, the fused floor torch.optim.Adam(fused=True) as Stride does; a run that did not reach "
      "the stop value counts as +inf in the medians)")
    for name, runs in (("stride", stride_runs), ("floor", floor_runs), ("floor-fused", fused_runs), ("sb3", sb3_runs)):
        for s_, r in runs.items():
            p(f"  {name} seed {s_}: CPU s per repetition {', '.join(f'{x:.2f}' for x in r['cpu_reps'])}"
              + ("; WARNING: repetitions differ in env steps / iterations" if r["nondeterministic"] else ""))
    for s, fl in floor_runs.items():
        if fl and st_any and st_any.get("n_params") and fl["n_params"] != st_any["n_params"]:
            p(f"WARNING seed {s}: floor model has {fl['n_params']} params, Stride's {st_any['n_params']}")
        if fl and "_warning" in fl.get("spec", {}):
            p(f"WARNING seed {s}: {fl['spec']['_warning']}")
    p("")
    if coll:
        p(f"Collector throughput, 8 x CartPole-v1, eps 0.1, {args.collector_steps} env steps per contestant per process, "
          f"alternating in {coll[0]['chunks']} chunks within each process, {len(coll)} processes; both contestants use "
          f"the same Q-net weights (initial: fresh init, ~10-step episodes; trained: Stride's run of that seed at the "
          f"stop value):")
        for r in coll:
            ep = r.get("mean_episode_length", {})
            p(f"  {r.get('model', 'initial'):>7} seed {r['seed']}: Stride SampleCollector {r['stride']['steps_per_cpu_s']:8.0f} "
              f"vs bare loop {r['bare']['steps_per_cpu_s']:8.0f} env steps / CPU s: ratio {r['ratio_total']:.3f} "
              f"(median over chunk pairs {r['ratio_median_of_pairs']:.3f}); mean episode length "
              f"{ep.get('stride', float('nan')):.1f} / {ep.get('bare', float('nan')):.1f}")
    p("")
    p("Targets (issue 2), on the minimum over repetitions (median over repetitions in brackets):")

    def ratio_line(label, num, den, target, op):
        out = []
        for est in ("min", "median"):
            a_, b_ = median_or_inf(stats[num][est]), median_or_inf(stats[den][est])
            if a_ is None or b_ is None:
                out.append(None)
            elif math.isinf(a_) or math.isinf(b_):
                out.append(math.inf if math.isinf(a_) else 0.0)
            else:
                out.append(a_ / b_)
        p(f"  {label} = {fmt(out[0], '{:.3f}')} ({fmt(out[1], '{:.3f}')})   target {op} {target}   "
          f"[{verdict(out[0], target, op)}] ({verdict(out[1], target, op)})")

    ratio_line("1. Stride median train CPU s / SB3 median train CPU s", "st", "sb", 1.0, "<=")
    ovs = [statistics.median(stats["ov"][e]) if stats["ov"][e] else None for e in ("min", "median")]
    p(f"  2. Stride framework overhead (train CPU s / floor CPU s), median over seeds = {fmt(ovs[0], '{:.3f}')} "
      f"({fmt(ovs[1], '{:.3f}')})   target <= 1.1   [{verdict(ovs[0], 1.1, '<=')}] ({verdict(ovs[1], 1.1, '<=')})")
    ovf = [statistics.median(stats["ovf"][e]) if stats["ovf"][e] else None for e in ("min", "median")]
    p(f"     (beside: against a floor with fused Adam = {fmt(ovf[0], '{:.3f}')} ({fmt(ovf[1], '{:.3f}')}) -- Stride's "
      f"Python overhead alone, without its optimizer choice)")
    for model in ("initial", "trained"):
        rs = [r["ratio_total"] for r in coll if r.get("model", "initial") == model]
        r3 = statistics.median(rs) if rs else None
        p(f"  3. collector throughput Stride / bare, {model} Q-net, median over processes = {fmt(r3, '{:.3f}')}   "
          f"target >= 0.8   [{verdict(r3, 0.8, '>=')}]")

    ses.write_report(L, {"stride": stride_runs, "floor": floor_runs, "floor_fused": fused_runs, "sb3": sb3_runs,
                         "collector": coll, "uptime_start": up_start, "uptime_end": up_end, "args": vars(args)})


if __name__ == "__main__":
    main()
