"""Driver of the PPO / SAC speed benchmark (issue 5). Run through ``run.sh``.

PPO on CartPole-v1 (stop: 100-episode mean >= Stride's stop_value, 475) and SAC on Pendulum-v1 (>= -250).
Per seed, each contestant runs in its own fresh process (clean CPU accounting and RNG):
  stride_ppo / stride_sac -- ``serial_pipeline`` on the zoo config (cartpole_ppo_config / pendulum_sac_config;
                             ``bench_common.stride_run``)
  floor_ppo / floor_sac   -- bare PyTorch + NumPy loop doing that seed's Stride env steps and gradient
                             steps (``bare_ppo.py --mode floor`` / ``floor_sac.py``) -> framework overhead
  sb3_ppo / sb3_sac       -- stable-baselines3 with rl-zoo3's hyper-parameters (``bench_common.sb3_run``), same stop rule
  cleanrl_ppo             -- CleanRL ppo.py default settings as a bare PyTorch loop (``bare_ppo.py --mode cleanrl``)
Stride and floor repetitions alternate. Shared helpers and the Stride / SB3 contestants: ``benchmarks/bench_common``.
Prints the report and writes it to ``benchmarks/results/onpolicy_sac_<date>.txt``.
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
CONFIG = {"ppo": "stride.zoo.cartpole.config.cartpole_ppo_config", "sac": "stride.zoo.pendulum.config.pendulum_sac_config"}
ENV = {"ppo": "CartPole-v1", "sac": "Pendulum-v1"}
ALL = ["stride_ppo", "floor_ppo", "sb3_ppo", "cleanrl_ppo", "stride_sac", "floor_sac", "sb3_sac"]


def floor_spec(algo: str, run: dict) -> dict:
    res, tc = run["result"], run["total_config"]
    L = lambda k, d=None: get(tc, "policy.learn." + k, d)  # noqa: E731
    spec = {"env_id": get(tc, "env.env_id"), "env_step": res["env_step"], "train_iter": res["train_iter"],
            "collector_env_num": get(tc, "env.collector_env_num"), "discount_factor": get(tc, "policy.discount_factor"),
            "batch_size": L("batch_size")}
    if algo == "ppo":
        m = get(tc, "policy.model")
        spec.update(gae_lambda=get(tc, "policy.gae_lambda"), learning_rate=L("learning_rate"),
                    lr_anneal_collects=L("lr_anneal_collects", 0), epoch_per_collect=L("epoch_per_collect"),
                    clip_ratio=L("clip_ratio"), value_clip_ratio=L("value_clip_ratio"), entropy_weight=L("entropy_weight"),
                    value_weight=L("value_weight"), grad_clip_norm=L("grad_clip_norm"), adv_norm=L("adv_norm"),
                    value_norm=L("value_norm"), recompute_adv=L("recompute_adv"),
                    encoder_hidden_size_list=m["encoder_hidden_size_list"], head_hidden_size=m["actor_head_hidden_size"])
        warn = []
        if m.get("activation") != "tanh" or not m.get("share_encoder", True):
            warn.append(f"Stride model activation={m.get('activation')} share_encoder={m.get('share_encoder')}; floor: tanh, shared")
        if m.get("actor_head_hidden_size") != m.get("critic_head_hidden_size") or m.get("actor_head_layer_num", 1) != 1:
            warn.append("Stride head sizes differ from the floor's (one hidden layer, actor size for both)")
        if get(tc, "policy.action_range") is not None or m.get("action_space") != "discrete":
            warn.append("floor_ppo only does discrete actions")
    else:
        m = get(tc, "policy.model")
        spec.update(random_collect_size=get(tc, "policy.random_collect_size"), n_sample=get(tc, "policy.collect.n_sample"),
                    update_per_collect=L("update_per_collect"), learning_rate_q=L("learning_rate_q"),
                    learning_rate_policy=L("learning_rate_policy"), learning_rate_alpha=L("learning_rate_alpha"),
                    alpha=L("alpha", 0.2), target_theta=L("target_theta"),
                    actor_hidden_size_list=m["actor_hidden_size_list"], critic_hidden_size_list=m["critic_hidden_size_list"],
                    log_sigma_range=m.get("log_sigma_range", [-20, 2]),
                    replay_buffer_size=get(tc, "policy.other.replay_buffer.replay_buffer_size"))
        warn = []
        if m.get("activation", "relu") != "relu" or not m.get("twin_critic", True) or not L("auto_alpha", True):
            warn.append("Stride SAC config differs from the floor's (relu, twin critics, auto alpha)")
        if get(tc, "policy.nstep", 1) != 1 or L("grad_clip_norm") is not None:
            warn.append("floor_sac assumes nstep=1, no grad clip")
    if warn:
        spec["_warning"] = "; ".join(warn)
    return spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap)
    ap.add_argument("--only", nargs="+", choices=ALL + ["ppo", "sac"], default=ALL,
                    help="contestants to run ('ppo' / 'sac' = all of that algorithm)")
    ap.add_argument("--ppo-max-env-steps", type=int, default=200_000, help="cap per PPO run (every contestant)")
    ap.add_argument("--sac-max-env-steps", type=int, default=50_000, help="cap per SAC run (every contestant)")
    ap.add_argument("--eval-every-ppo", type=int, default=None, help="peer evaluation period in env steps "
                    "(default: Stride's eval_freq x n_sample)")
    ap.add_argument("--eval-every-sac", type=int, default=None, help="default: eval_freq x n_sample / update_per_collect")
    ap.add_argument("--stride-reps", type=int, default=3, help="Stride runs per seed (median CPU)")
    ap.add_argument("--floor-reps", type=int, default=3, help="floor runs per seed (median CPU)")
    args = ap.parse_args()
    only = set()
    for o in args.only:
        only |= {c for c in ALL if c.endswith("_" + o)} if o in ("ppo", "sac") else {o}

    ses = start("onpolicy_sac", args.stride_ref)
    logdir, up_start = ses.logdir, ses.up_start
    run = Runner(logdir, args.timeout, ses.stride_src, HERE)
    print(f"PPO/SAC benchmark, seeds {args.seeds}, contestants {sorted(only)}, logs in {logdir}\n{up_start}")

    algos = [a for a in ("ppo", "sac") if any(c.endswith("_" + a) for c in only)]
    sd, data = {}, {}
    for algo in algos:
        sd[algo] = stride_eval_settings(ses.stride_src, CONFIG[algo], iters_per_collect=algo != "ppo")
        cap = args.ppo_max_env_steps if algo == "ppo" else args.sac_max_env_steps
        eval_every = (args.eval_every_ppo if algo == "ppo" else args.eval_every_sac) or int(round(sd[algo]["env_steps_per_eval"]))
        sd[algo].update(cap=cap, eval_every=eval_every)
        d = data[algo] = {"stride": {}, "floor": {}, "sb3": {}, "cleanrl": {}}
        peer_args = ["--eval-every", eval_every, "--eval-episodes", sd[algo]["n_evaluator_episode"],
                     "--eval-envs", sd[algo]["evaluator_env_num"], "--stop-value", sd[algo]["stop_value"],
                     "--confirm-episodes", sd[algo].get("confirm_episode", 0)]
        print(f"== {algo.upper()} on {ENV[algo]}: stop {sd[algo]['stop_value']}, cap {cap} env steps, "
              f"peers evaluated every {eval_every} env steps")
        for s in args.seeds:
            st_reps, fl_reps, spec_path = [], [], None
            n_st = args.stride_reps if f"stride_{algo}" in only else 0
            n_fl = args.floor_reps if f"floor_{algo}" in only else 0
            for k in range(max(n_st, n_fl)):
                if k < n_st:
                    r = run(f"stride_{algo}_seed{s}_rep{k}", "bench_common.stride_run", "--algo", algo, "--seed", s,
                            "--max-env-steps", cap, "--exp-dir", os.path.join(logdir, f"stride_{algo}_exp_seed{s}_rep{k}"))
                    if r:
                        st_reps.append(r)
                if spec_path is None and st_reps and n_fl:
                    spec_path = os.path.join(logdir, f"floor_{algo}_spec_seed{s}.json")
                    with open(spec_path, "w") as f:
                        json.dump(floor_spec(algo, st_reps[0]), f, indent=1)
                if k < n_fl and spec_path:
                    if algo == "ppo":
                        r = run(f"floor_ppo_seed{s}_rep{k}", "bare_ppo.py", "--mode", "floor", "--seed", s,
                                "--spec", spec_path)
                    else:
                        r = run(f"floor_sac_seed{s}_rep{k}", "floor_sac.py", "--seed", s, "--spec", spec_path)
                    if r:
                        fl_reps.append(r)
            if st_reps:
                counts = {(r["result"]["env_step"], r["result"]["train_iter"], bool(r["result"]["stop"])) for r in st_reps}
                cpus = [r["result"]["train_cpu_seconds"] for r in st_reps]
                d["stride"][s] = dict(st_reps[0], train_cpu_seconds_reps=cpus, nondeterministic=len(counts) > 1)
                d["stride"][s]["result"] = dict(st_reps[0]["result"], train_cpu_seconds=statistics.median(cpus))
            if fl_reps:
                d["floor"][s] = dict(fl_reps[0], cpu_seconds_reps=[r["cpu_seconds"] for r in fl_reps])
                d["floor"][s]["cpu_seconds"] = statistics.median(d["floor"][s]["cpu_seconds_reps"])
            if f"sb3_{algo}" in only:
                d["sb3"][s] = run(f"sb3_{algo}_seed{s}", "bench_common.sb3_run", "--algo", algo, "--seed", s,
                                  "--max-env-steps", cap, *peer_args)
            if f"cleanrl_{algo}" in only:
                d["cleanrl"][s] = run(f"cleanrl_{algo}_seed{s}", "bare_ppo.py", "--mode", "cleanrl", "--seed", s,
                                      "--max-env-steps", cap, *peer_args)
    up_end = uptime()

    # ---------------------------------------------------------------- report
    L = ses.report_header("Stride PPO (CartPole-v1) / SAC (Pendulum-v1) speed benchmark (issue 5)", up_end)
    p = L.append
    p(f"seeds {args.seeds}; Stride reps {args.stride_reps}, floor reps {args.floor_reps} per seed (median CPU)")
    p("timing: process CPU seconds (time.process_time), never wall time; each contestant in a fresh subprocess with "
      "torch.set_num_threads(1); train CPU s excludes the CPU inside evaluations")
    targets = []
    for algo in algos:
        d, S = data[algo], sd[algo]
        p("")
        p(f"===== {algo.upper()} on {ENV[algo]} =====")
        p(f"stop rule (all): mean return of a {S['n_evaluator_episode']}-episode deterministic evaluation on "
          f"{S['evaluator_env_num']} separate envs >= {S['stop_value']}, confirmed on {S.get('confirm_episode', 0)} "
          f"further episodes; cap {S['cap']} env steps per run")
        p(f"evaluation period: Stride every {S['eval_freq_train_iter']} train iters (~{fmt(S['env_steps_per_eval'], '{:.0f}')} "
          f"env steps); peers every {S['eval_every']} env steps")
        sb = next((r for r in d["sb3"].values() if r), None)
        if sb:
            p(f"SB3 {sb['sb3_version']} {algo.upper()}, rl-zoo3 hyper-parameters from {sb['hyperparams_file']}:")
            p(f"  {ENV[algo]}: " + json.dumps(sb["hyperparams_raw"], sort_keys=True))
            lin = [k for k, v in sb["hyperparams_raw"].items() if isinstance(v, str) and v.startswith("lin_")]
            p(f"  n_envs={sb['n_envs']}; " + (f"lin_ schedules ({', '.join(lin)}) kept on rl-zoo3's absolute clock "
              f"(0 at n_timesteps={sb['n_timesteps']}); " if lin else "") + f"policy params {sb['n_params']}")
        cr = next((r for r in d["cleanrl"].values() if r), None)
        if cr:
            p("CleanRL-equivalent (bare PyTorch, CleanRL ppo.py defaults): " +
              ", ".join(f"{k}={v}" for k, v in cr["settings"].items()) + f"; params {cr['n_params']}")
        st_any = next((r for r in d["stride"].values() if r), None)
        if st_any:
            tc = st_any["total_config"]
            p("Stride config used (total_config.json): policy.learn=" + json.dumps(
                {k: v for k, v in get(tc, "policy.learn", {}).items() if k != "learner"}, sort_keys=True))
            p(f"  policy.model={json.dumps(get(tc, 'policy.model'), sort_keys=True)}, collect.n_sample="
              f"{get(tc, 'policy.collect.n_sample')}, collector_env_num={get(tc, 'env.collector_env_num')}")
            p(f"  model state-dict numel {st_any.get('n_params')}"
              + (" (a shared encoder is counted once per head)" if algo == "ppo" else ""))
        p("")
        p("Per seed: env steps to stop value / train CPU s (eval CPU s) / train iters "
          + ("(Stride: collects; SB3, CleanRL: minibatch gradient steps)" if algo == "ppo" else "(gradient steps)"))
        hdr = (f"{'seed':>4} | {'Stride steps':>12} {'train s':>8} {'(eval s)':>9} {'iters':>6} | {'floor s':>8} {'overhd':>6} | "
               f"{'SB3 steps':>11} {'train s':>8} {'(eval s)':>9} {'iters':>6}")
        if algo == "ppo":
            hdr += f" | {'CleanRL st':>11} {'train s':>8} {'(eval s)':>9} {'iters':>6}"
        p(hdr)
        col = {"stride": [], "sb3": [], "cleanrl": []}
        steps = {"stride": [], "sb3": [], "cleanrl": []}
        overheads, pooled = [], [0.0, 0.0]

        def peer_cells(r, name):
            if not r:
                return f"{('failed' if f'{name}_{algo}' in only else 'skipped'):>11} {'':>8} {'':>9} {'':>6}"
            ok = bool(r["stop"])
            col[name].append(r["train_cpu_seconds"] if ok else None)
            steps[name].append(r["env_step"] if ok else None)
            return (f"{(r['env_step'] if ok else 'not reached'):>11} {r['train_cpu_seconds']:>8.1f} "
                    f"{'(' + format(r['eval_cpu_seconds'], '.1f') + ')':>9} {r['train_iter']:>6}")

        for s in args.seeds:
            st, fl = d["stride"].get(s), d["floor"].get(s)
            row = f"{s:>4} | "
            if st:
                r = st["result"]
                ok = bool(r.get("stop"))
                col["stride"].append(r["train_cpu_seconds"] if ok else None)
                steps["stride"].append(r["env_step"] if ok else None)
                row += (f"{(r['env_step'] if ok else 'not reached'):>12} {r['train_cpu_seconds']:>8.1f} "
                        f"{'(' + format(r.get('eval_cpu_seconds', float('nan')), '.1f') + ')':>9} {r['train_iter']:>6} | ")
            else:
                row += f"{('failed' if f'stride_{algo}' in only else 'skipped'):>12} {'':>8} {'':>9} {'':>6} | "
            if st and fl:
                ov = st["result"]["train_cpu_seconds"] / fl["cpu_seconds"]
                overheads.append(ov)
                pooled[0] += st["result"]["train_cpu_seconds"]
                pooled[1] += fl["cpu_seconds"]
                row += f"{fl['cpu_seconds']:>8.1f} {ov:>6.2f} | "
            else:
                row += f"{'n/a':>8} {'':>6} | "
            row += peer_cells(d["sb3"].get(s), "sb3")
            if algo == "ppo":
                row += " | " + peer_cells(d["cleanrl"].get(s), "cleanrl")
            p(row)
        med = {k: median_or_inf(v) for k, v in col.items()}
        row = (f"{'med':>4} | {fmt(median_or_inf(steps['stride']), '{:.0f}'):>12} {fmt(med['stride']):>8} {'':>9} {'':>6} | "
               f"{'':>8} {fmt(statistics.median(overheads) if overheads else None, '{:.2f}'):>6} | "
               f"{fmt(median_or_inf(steps['sb3']), '{:.0f}'):>11} {fmt(med['sb3']):>8}")
        if algo == "ppo":
            row += f" {'':>9} {'':>6} | {fmt(median_or_inf(steps['cleanrl']), '{:.0f}'):>11} {fmt(med['cleanrl']):>8}"
        p(row)
        p("(overhd = Stride train CPU s / floor CPU s for the same seed's env steps and gradient steps; "
          "a run that did not reach the stop value counts as +inf in the medians)")
        for s, fl in d["floor"].items():
            extra = f", gradient steps {fl['grad_steps_done']}" if "grad_steps_done" in fl else ""
            p(f"  floor seed {s}: CPU s per rep {', '.join(f'{x:.1f}' for x in fl['cpu_seconds_reps'])}; env steps "
              f"{fl['env_step_done']} (Stride {fl['spec']['env_step']}), train iters {fl['train_iter_done']} "
              f"(Stride {fl['spec']['train_iter']}){extra}; params {fl['n_params']}")
            if "_warning" in fl.get("spec", {}):
                p(f"  WARNING seed {s}: {fl['spec']['_warning']}")
        for s, st in d["stride"].items():
            r = st["result"]
            p(f"  stride seed {s}: train CPU s per rep {', '.join(f'{x:.1f}' for x in st['train_cpu_seconds_reps'])}"
              + ("; WARNING: reps differ in env steps / train iters" if st["nondeterministic"] else "")
              + f"; eval_return {fmt(r.get('eval_return'))}; outer CPU {st['outer_cpu_seconds']:.1f}s, wall {st['_wall_s']:.0f}s")
        for name in ("sb3", "cleanrl"):
            for s, r in d[name].items():
                if r:
                    p(f"  {name} seed {s}: eval history (env step, mean) {r['eval_history'][-6:]}")

        def ratio(a, b):
            if a is None or not b:
                return None
            if math.isinf(a) or math.isinf(b):
                return float("nan") if math.isinf(a) and math.isinf(b) else (math.inf if math.isinf(a) else 0.0)
            return a / b

        r1 = ratio(med["stride"], med["sb3"])
        targets.append(f"  {algo.upper()}: Stride median train CPU s / SB3 median = {fmt(r1, '{:.3f}'):>7}   target < 1     "
                       f"[{verdict(r1, 1.0, '<=') if r1 != 1.0 else 'NOT MET'}]   ({fmt(med['stride'])} / {fmt(med['sb3'])})")
        if algo == "ppo":
            rc = ratio(med["stride"], med["cleanrl"])
            targets.append(f"  PPO: Stride median train CPU s / CleanRL-equivalent median = {fmt(rc, '{:.3f}'):>7}   "
                           f"(no target; for information)   ({fmt(med['stride'])} / {fmt(med['cleanrl'])})")
        r2 = statistics.median(overheads) if overheads else None
        r2p = pooled[0] / pooled[1] if pooled[1] else None
        targets.append(f"  {algo.upper()}: Stride framework overhead (train CPU s / floor CPU s), median over seeds = "
                       f"{fmt(r2, '{:.3f}')}   target <= 1.1   [{verdict(r2, 1.1, '<=')}]   (per seed: "
                       f"{', '.join(f'{x:.2f}' for x in overheads)}; pooled {fmt(r2p, '{:.3f}')})")
    p("")
    p("Targets (issue 5):")
    L.extend(targets)
    ses.write_report(L, {"data": data, "settings": sd, "uptime_start": up_start, "uptime_end": up_end,
                         "args": vars(args)})


if __name__ == "__main__":
    main()
