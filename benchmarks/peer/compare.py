#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
"""tprimat beside its PyTorch peer, back to back on one GPU, and the ratio table.

For each model, micro-batch size and precision, runs `tprimat bench` once (result JSON read from
its --output-dir) and then `pytorch_step.py` eager and compiled (its one JSON line on stdout),
same layers, seq, global batch and timed steps, and prints one row per peer mode:

    python3 benchmarks/peer/compare.py                                # build-gpu/apps/tprimat/tprimat
    python3 benchmarks/peer/compare.py --cli build/apps/tprimat/tprimat --modes eager --mbs 1
    python3 benchmarks/peer/compare.py --precisions bf16,fp8 --modes compile --models llama

Both sides accumulate gradients over gbs / mbs micro-batches before one clip and AdamW step (gbs
64 by default: the batch people train with; --gbs 1 x mbs gives the optimizer-bound one-sample
step). fp8: tprimat's --precision fp8 --fp8-recipe current against the peer's --fp8 (torchao's
tensorwise recipe in plain PyTorch, float8_linear.py): both take each tensor's scale from its own
amax just before its cast, and both run the same decoder layers in FP8: every one by default (as
torchao converts them), or with --fp8-bf16-layers-at-start/-end N the first/last N kept in bf16 on
both sides (1 and 1 is NeMo's current-scaling recipe, tprimat's default). A row whose two sides
ran other layers in FP8 gets no ratio.

Default grid: {llama, qwen} x {mbs 1, 2} x bf16 x {eager, compile}, 8 layers, seq 2048, gbs 64,
5 timed steps (tprimat after 2 warm-up steps, the peer after 3, or 5 compiled). Everything each
run printed and every figure go under --output-dir (default ./compare):
ours/<model>-mbs<b>-<precision>/ (tprimat's result and log), peer_<model>_mbs<b>_<precision>_
<mode>.log, compare.json and compare.md (the table). Exit status 1 when a run failed (its cells
read "failed"), else 0.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import time

from float8_linear import bf16_ends_error, kept_in_bf16

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def csv(kind):
    return lambda text: [kind(x) for x in text.split(",") if x]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", default=os.path.join(ROOT, "build-gpu", "apps", "tprimat", "tprimat"),
                   help="the tprimat binary (default: build-gpu/apps/tprimat/tprimat)")
    p.add_argument("--models", type=csv(str), default=["llama", "qwen"])
    p.add_argument("--mbs", type=csv(int), default=[1, 2], help="micro-batch sizes")
    p.add_argument("--gbs", type=int, default=64,
                   help="global batch: gbs / mbs micro-batches accumulated a step (default 64)")
    p.add_argument("--precisions", type=csv(str), default=["bf16"], help="bf16, fp8")
    p.add_argument("--modes", type=csv(str), default=["eager", "compile"],
                   help="peer modes: eager, compile")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--steps", type=int, default=5, help="timed steps of every run")
    p.add_argument("--warmup-steps", type=int, default=2, help="tprimat's untimed steps")
    p.add_argument("--python", default=sys.executable, help="interpreter for the peer")
    p.add_argument("--output-dir", default="compare")
    p.add_argument("--timeout", type=float, default=300, help="seconds per run (then killed)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.add_argument("--fp8-bf16-layers-at-start", type=int, default=0,
                   help="fp8 rows: decoder layers both sides keep in bf16 at the start (default 0)")
    p.add_argument("--fp8-bf16-layers-at-end", type=int, default=0,
                   help="fp8 rows: decoder layers both sides keep in bf16 at the end (default 0)")
    args = p.parse_args(argv)
    bad = [m for m in args.modes if m not in ("eager", "compile")]
    if bad:
        p.error(f"unknown --modes {bad}: use eager, compile")
    bad = [x for x in args.precisions if x not in ("bf16", "fp8")]
    if bad:
        p.error(f"unknown --precisions {bad}: use bf16, fp8")
    if args.gbs < 1 or any(b < 1 or args.gbs % b for b in args.mbs):
        p.error(f"--gbs {args.gbs} must be a positive multiple of every --mbs {args.mbs}")
    why = bf16_ends_error(args.layers, args.fp8_bf16_layers_at_start, args.fp8_bf16_layers_at_end)
    if why:
        p.error(why)
    return args


def fp8_layer_flags(args) -> list[str]:
    """The layers an fp8 row keeps in bf16, as both sides take them."""
    return ["--fp8-bf16-layers-at-start", str(args.fp8_bf16_layers_at_start),
            "--fp8-bf16-layers-at-end", str(args.fp8_bf16_layers_at_end)]


def kept_in_bf16(args, precision: str) -> list[int] | None:
    """The decoder layers an fp8 row asks both sides to keep in bf16; None for bf16."""
    if precision != "fp8":
        return None
    return kept_in_bf16(args.layers, args.fp8_bf16_layers_at_start, args.fp8_bf16_layers_at_end)


def run(cmd: list[str], log_path: str, timeout: float, dry_run: bool):
    """Runs cmd, stdout and stderr to log_path; returns (rc, stdout, seconds)."""
    log("+ " + " ".join(shlex.quote(c) for c in cmd))
    if dry_run:
        return 0, "", 0.0
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        rc, out = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as e:
        rc = 124
        out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
    seconds = time.monotonic() - start
    with open(log_path, "w") as f:
        f.write(out)
    if rc != 0:
        log(f"  exit {rc} after {seconds:.0f} s; last lines of {log_path}:")
        for line in out.strip().splitlines()[-8:]:
            log("  | " + line)
    return rc, out, seconds


def ours(args, model: str, mbs: int, precision: str) -> dict | None:
    out_dir = os.path.join(args.output_dir, "ours", f"{model}-mbs{mbs}-{precision}")
    os.makedirs(out_dir, exist_ok=True)
    cmd = [args.cli, "bench", "--backend", "cuda", "--model", model, "--layers", str(args.layers),
           "--mbs", str(mbs), "--gbs", str(args.gbs), "--seq", str(args.seq), "--steps",
           str(args.steps), "--warmup-steps", str(args.warmup_steps), "--output-dir", out_dir]
    if precision == "fp8":
        cmd += ["--precision", "fp8", "--fp8-recipe", "current"] + fp8_layer_flags(args)
    rc, _, seconds = run(cmd, os.path.join(out_dir, "run.log"), args.timeout, args.dry_run)
    if rc != 0 or args.dry_run:
        return None
    files = sorted(glob.glob(os.path.join(out_dir, f"benchmark_*_{model}.json")))
    if not files:
        log(f"  no benchmark_*_{model}.json in {out_dir}")
        return None
    with open(files[0]) as f:
        r = json.load(f)
    perf, mem = r["performance_metrics"], r["memory_metrics"]
    return {
        "tokens_per_second": perf["tokens_per_second"],
        "mfu": perf.get("mfu"),
        "step_time_mean_s": perf["avg_step_time_seconds"],
        "step_time_median_s": perf.get("median_step_time_seconds"),
        "model_tflops_per_gpu": perf.get("model_tflops_per_gpu"),
        "peak_memory_gib": mem["peak_allocated_gb"],  # the pool's peak in use; GiB despite "gb"
        "attention": r.get("training_config", {}).get("attention"),
        "cuda_graph": r.get("training_config", {}).get("cuda_graph"),
        "device": r.get("gpu_info", {}).get("device_name"),
        "bf16_layers": (r.get("training_config", {}).get("fp8") or {}).get("bf16_layers"),
        "wall_seconds": seconds,
        "result_file": files[0],
    }


def peer(args, model: str, mbs: int, precision: str, mode: str) -> dict | None:
    cmd = [args.python, os.path.join(HERE, "pytorch_step.py"), "--model", model, "--layers",
           str(args.layers), "--mbs", str(mbs), "--grad-accum", str(args.gbs // mbs), "--seq",
           str(args.seq), "--steps", str(args.steps)]
    if mode == "compile":
        cmd.append("--compile")
    if precision == "fp8":
        cmd += ["--fp8"] + fp8_layer_flags(args)
    log_path = os.path.join(args.output_dir, f"peer_{model}_mbs{mbs}_{precision}_{mode}.log")
    rc, out, seconds = run(cmd, log_path, args.timeout, args.dry_run)
    if rc != 0 or args.dry_run:
        return None
    for line in reversed(out.strip().splitlines()):  # the one JSON line; progress precedes it
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("peer") == "pytorch":
            r["wall_seconds"] = seconds
            return r
    log(f"  no result line in {log_path}")
    return None


def fmt(value, spec: str, scale: float = 1.0) -> str:
    return "failed" if value is None else format(value * scale, spec)


def unlike(r: dict) -> str:
    """Why row r's two sides did not run the same work ("" where they did): an fp8 row whose
    sides kept other layers in bf16 than asked."""
    if r["precision"] != "fp8" or not r["ours"] or not r["peer"]:
        return ""
    sides = {"tprimat": r["ours"].get("bf16_layers"), "peer": r["peer"].get("bf16_layers")}
    wrong = [f"{side} kept {kept} in bf16" for side, kept in sides.items() if kept != r["bf16_layers"]]
    return "; ".join(wrong) + (f", not {r['bf16_layers']}" if wrong else "")


def precision_label(r: dict) -> str:
    if r["precision"] != "fp8":
        return r["precision"]
    kept = r["bf16_layers"]
    return "fp8 (every layer)" if not kept else "fp8 (bf16 layers " + ",".join(map(str, kept)) + ")"


def table(rows: list[dict]) -> str:
    head = ["model", "mbs", "precision", "peer", "tprimat tok/s", "peer tok/s", "ratio", "tprimat MFU",
            "peer MFU", "tprimat ms/step", "peer ms/step", "tprimat peak GiB", "peer peak GiB"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        o, p = r["ours"] or {}, r["peer"] or {}
        ratio = (o["tokens_per_second"] / p["tokens_per_second"]
                 if o.get("tokens_per_second") and p.get("tokens_per_second") and not unlike(r)
                 else None)
        lines.append("| " + " | ".join([
            r["model"], str(r["mbs"]), precision_label(r), r["mode"],
            fmt(o.get("tokens_per_second"), ",.0f"), fmt(p.get("tokens_per_second"), ",.0f"),
            "unlike work" if unlike(r) else fmt(ratio, ".2f") + ("x" if ratio else ""),
            fmt(o.get("mfu"), ".1%"), fmt(p.get("mfu"), ".1%"),
            fmt(o.get("step_time_mean_s"), ".1f", 1e3), fmt(p.get("step_time_mean_s"), ".1f", 1e3),
            fmt(o.get("peak_memory_gib"), ".1f"), fmt(p.get("peak_memory_gib"), ".1f"),
        ]) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.dry_run and not os.access(args.cli, os.X_OK):
        log(f"compare: {args.cli} is not an executable tprimat; build it (scripts/gpu-check.sh "
            "build) or pass --cli")
        return 2
    os.makedirs(args.output_dir, exist_ok=True)
    rows, failed = [], False
    for model in args.models:
        for mbs in args.mbs:
            for precision in args.precisions:
                mine = ours(args, model, mbs, precision)
                failed |= mine is None and not args.dry_run
                for mode in args.modes:
                    theirs = peer(args, model, mbs, precision, mode)
                    failed |= theirs is None and not args.dry_run
                    row = {"model": model, "mbs": mbs, "precision": precision, "mode": mode,
                           "bf16_layers": kept_in_bf16(args, precision), "ours": mine,
                           "peer": theirs}
                    if unlike(row):
                        log(f"compare: {model} mbs {mbs} {precision} {mode}: {unlike(row)}: "
                            "no ratio")
                        failed = True
                    rows.append(row)
    text = table(rows)
    setup = (f"{args.layers} layers, seq {args.seq}, gbs {args.gbs} (gradient accumulation over "
             f"gbs / mbs micro-batches, one AdamW step), {args.steps} timed steps each; tprimat: "
             f"cuDNN attention and CUDA graph where the run chose them, fp8 = --precision fp8 "
             f"--fp8-recipe current, the same decoder layers in FP8 on both sides; peer: pytorch_step.py (HF model, SDPA, bf16 autocast, fused "
             f"AdamW; fp8 = torchao's tensorwise recipe, float8_linear.py). MFU: PaLM FLOPs over "
             f"the dense bf16 peak; peak memory: tprimat's pool / torch.cuda.max_memory_allocated.")
    with open(os.path.join(args.output_dir, "compare.json"), "w") as f:
        json.dump({"setup": setup, "args": vars(args), "rows": rows}, f, indent=2)
    with open(os.path.join(args.output_dir, "compare.md"), "w") as f:
        f.write(setup + "\n\n" + text + "\n")
    print(setup)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
