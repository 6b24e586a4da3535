#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
"""The PyTorch peer of tprimat's training step: the same model widths and step, in eager PyTorch.

Builds a Hugging Face LlamaForCausalLM / Qwen2ForCausalLM / MistralForCausalLM from a config (no
download, random init std 0.02), fp32 parameters on one GPU, bf16 autocast, SDPA attention, fused
AdamW (lr 3e-4, betas 0.9/0.95, eps 1e-8, weight decay 0.1 on matrices only, as tprimat), global
gradient clipping at 1.0, random token ids. Times warm-up steps then timed steps with CUDA events
and prints ONE JSON line on stdout (everything else goes to stderr), e.g.

    python3 benchmarks/peer/pytorch_step.py --model llama --layers 8
    python3 benchmarks/peer/pytorch_step.py --model qwen --layers 4 --compile
    python3 benchmarks/peer/pytorch_step.py --model llama --layers 32 --grad-accum 64

--grad-accum N accumulates N micro-batches' gradients before one clip and AdamW step, as tprimat
does at gbs = N x mbs (the loss of each micro-batch scaled by 1/N, so the step sees the mean).

--fp8 runs the decoder projections in FP8 as torchao's float8 "tensorwise" recipe does (dynamic
per-tensor scales, E4M3 forward, E5M2 gradients, torch._scaled_mm: float8_linear.py), beside
tprimat's --precision fp8 --fp8-recipe current; best with --compile, as torchao is used.

MFU follows tprimat (PaLM): FLOPs/token = 6 * P_matmul + 12 * L * H * Dh * S, where P_matmul is
every parameter but the input embedding, divided by the device's dense bf16 peak.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

from float8_linear import bf16_ends_error, kept_in_bf16

# Real widths of the full models (HF config.json of each model card); --layers cuts the depth.
MODELS = {
    "llama": {
        "name": "Llama 3.1 8B",
        "config": "LlamaConfig",
        "hidden": 4096,
        "layers": 32,
        "heads": 32,
        "kv_heads": 8,
        "ffn": 14336,
        "vocab": 128256,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        "norm_eps": 1e-5,
        "max_positions": 131072,
    },
    "qwen": {  # Qwen2 attention always has q/k/v biases
        "name": "Qwen 2.5 7B",
        "config": "Qwen2Config",
        "hidden": 3584,
        "layers": 28,
        "heads": 28,
        "kv_heads": 4,
        "ffn": 18944,
        "vocab": 152064,
        "rope_theta": 1000000.0,
        "rope_scaling": None,
        "norm_eps": 1e-6,
        "max_positions": 131072,
        "extra": {"use_sliding_window": False, "sliding_window": None},
    },
    "mistral": {  # v0.3: extended vocabulary, no sliding window
        "name": "Mistral 7B v0.3",
        "config": "MistralConfig",
        "hidden": 4096,
        "layers": 32,
        "heads": 32,
        "kv_heads": 8,
        "ffn": 14336,
        "vocab": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": None,
        "norm_eps": 1e-5,
        "max_positions": 32768,
        "extra": {"sliding_window": None},
    },
}

# Dense bf16 peaks, TFLOP/s (include/tprimat/backend/peaks.hpp; longer matches first).
DENSE_PEAKS = [
    ("H200", 989.4),
    ("H100 PCIe", 756.5),
    ("H100", 989.4),
    ("A100", 312.0),
    ("MI325X", 1307.4),
    ("MI300X", 1307.4),
    ("MI250X", 383.0),
]


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def dense_peak_tflops(device_name: str) -> float:
    for match, tflops in DENSE_PEAKS:
        if match in device_name:
            return tflops
    return 0.0


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), default="llama")
    p.add_argument("--layers", type=int, default=8,
                   help="transformer layers to build (default 8: a full 7-8B model with fp32 "
                        "AdamW state does not fit one 80 GB GPU)")
    p.add_argument("--mbs", type=int, default=1, help="micro-batch size (sequences per micro-batch)")
    p.add_argument("--grad-accum", type=int, default=1,
                   help="micro-batches a step, one optimizer update after them (default: 1)")
    p.add_argument("--seq", type=int, default=2048, help="sequence length")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed steps first (default 3, or 5 with --compile)")
    p.add_argument("--steps", type=int, default=10, help="timed steps")
    p.add_argument("--compile", action="store_true", help="wrap the model with torch.compile")
    p.add_argument("--fp8", action="store_true",
                   help="decoder projections in FP8, tensorwise dynamic scaling (float8_linear.py)")
    p.add_argument("--fp8-bf16-layers-at-start", type=int, default=0,
                   help="with --fp8: decoder layers kept in bf16 at the start (default: 0, "
                        "torchao's recipe converts every layer)")
    p.add_argument("--fp8-bf16-layers-at-end", type=int, default=0,
                   help="with --fp8: decoder layers kept in bf16 at the end (default: 0)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--peak-tflops", type=float, default=None,
                   help="dense bf16 peak for MFU (default: by device name; H100 SXM 989.4)")
    args = p.parse_args(argv)
    if args.warmup is None:
        args.warmup = 5 if args.compile else 3
    if (args.layers < 1 or args.mbs < 1 or args.grad_accum < 1 or args.seq < 2 or args.steps < 1
            or args.warmup < 0):
        p.error("--layers, --mbs, --grad-accum, --steps must be >= 1, --seq >= 2, --warmup >= 0")
    kept = (args.fp8_bf16_layers_at_start, args.fp8_bf16_layers_at_end)
    if bf16_ends_error(args.layers, *kept):
        p.error(bf16_ends_error(args.layers, *kept))
    if sum(kept) > 0 and not args.fp8:
        p.error("--fp8-bf16-layers-at-start/-end are for an --fp8 run")
    return args


def build_config(transformers, spec: dict, layers: int):
    """The model's HF config with real widths; RoPE through whichever API this version has
    (transformers 5 folds rope_theta and rope_scaling into rope_parameters)."""
    cls = getattr(transformers, spec["config"])
    kwargs = dict(
        vocab_size=spec["vocab"],
        hidden_size=spec["hidden"],
        intermediate_size=spec["ffn"],
        num_hidden_layers=layers,
        num_attention_heads=spec["heads"],
        num_key_value_heads=spec["kv_heads"],
        max_position_embeddings=spec["max_positions"],
        rms_norm_eps=spec["norm_eps"],
        initializer_range=0.02,
        tie_word_embeddings=False,
        use_cache=False,
        attention_dropout=0.0,
        **spec.get("extra", {}),
    )
    scaling = spec["rope_scaling"]
    if hasattr(cls(), "rope_parameters"):
        kwargs["rope_parameters"] = {**(scaling or {"rope_type": "default"}),
                                     "rope_theta": spec["rope_theta"]}
    else:
        kwargs["rope_theta"] = spec["rope_theta"]
        if scaling:
            kwargs["rope_scaling"] = dict(scaling)
    config = cls(**kwargs)

    # Read RoPE back: a silently ignored key would time a different model.
    params = getattr(config, "rope_parameters", None)
    if isinstance(params, dict) and "rope_theta" in params:
        theta, rope_type = params["rope_theta"], params.get("rope_type", "default")
    else:
        theta = config.rope_theta
        rope_type = (getattr(config, "rope_scaling", None) or {}).get("rope_type", "default")
    want_type = scaling["rope_type"] if scaling else "default"
    if float(theta) != spec["rope_theta"] or rope_type != want_type:
        raise SystemExit(f"pytorch_step: transformers {transformers.__version__} built RoPE "
                         f"theta={theta} type={rope_type}, wanted {spec['rope_theta']} {want_type}")
    return config


def build_model(torch, transformers, config, compile_model: bool, fp8: bool,
                bf16_ends: tuple[int, int] = (0, 0)):
    with torch.device("cuda"):
        try:
            model = transformers.AutoModelForCausalLM.from_config(config,
                                                                  attn_implementation="sdpa")
        except TypeError:
            config._attn_implementation = "sdpa"
            model = transformers.AutoModelForCausalLM.from_config(config)
    model = model.to(device="cuda", dtype=torch.float32)  # fp32 master parameters
    model.train()
    attn = getattr(model.config, "_attn_implementation", None)
    if attn != "sdpa":
        raise SystemExit(f"pytorch_step: attention implementation is {attn!r}, wanted 'sdpa'")
    if fp8:
        from float8_linear import PROJECTIONS, convert_to_float8
        swapped = convert_to_float8(torch, model, *bf16_ends)
        fp8_layers = config.num_hidden_layers - sum(bf16_ends)
        if swapped != len(PROJECTIONS) * fp8_layers:
            raise SystemExit(f"pytorch_step: {swapped} projections in FP8, wanted "
                             f"{len(PROJECTIONS)} in each of {fp8_layers} layers")
    return (torch.compile(model) if compile_model else model), model


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
        import transformers
    except ImportError as e:
        log(f"pytorch_step: {e}; needs torch and transformers (the GPU machine's python3 has both)")
        return 2
    if not torch.cuda.is_available():
        log("pytorch_step: no CUDA device visible to PyTorch; run on a GPU machine")
        return 2
    transformers.logging.set_verbosity_error()
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 stays fp32 outside autocast
    spec = MODELS[args.model]
    device_name = torch.cuda.get_device_name()
    peak = args.peak_tflops if args.peak_tflops is not None else dense_peak_tflops(device_name)

    t0 = time.perf_counter()
    config = build_config(transformers, spec, args.layers)
    model, module = build_model(torch, transformers, config, args.compile, args.fp8,
                                (args.fp8_bf16_layers_at_start, args.fp8_bf16_layers_at_end))
    log(f"pytorch_step: built {spec['name']} x {args.layers} layers on {device_name} "
        f"in {time.perf_counter() - t0:.1f} s")

    # Only matrices decay, as tprimat (and Megatron) do: norm gains and biases are excluded.
    decay = [p for p in module.parameters() if p.ndim >= 2]
    no_decay = [p for p in module.parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=3e-4, betas=(0.9, 0.95), eps=1e-8, fused=True)

    n_params = sum(p.numel() for p in module.parameters())
    p_matmul = n_params - module.get_input_embeddings().weight.numel()
    head_dim = spec["hidden"] // spec["heads"]
    flops_per_token = 6.0 * p_matmul + 12.0 * args.layers * spec["heads"] * head_dim * args.seq

    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    total = args.warmup + args.steps
    # seq + 1 ids per sequence: inputs are the first seq, targets the last seq (next token).
    # Each step draws its own micro-batches, before its start event.
    def micro_batches():
        return [torch.randint(0, spec["vocab"], (args.mbs, args.seq + 1), device="cuda",
                              generator=gen) for _ in range(args.grad_accum)]

    def step(batch):
        total_loss = torch.zeros((), device="cuda")
        for ids in batch:
            inputs, targets = ids[:, :-1], ids[:, 1:]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(input_ids=inputs, use_cache=False).logits
                # cross_entropy runs in fp32 under autocast
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
            (loss / args.grad_accum).backward()  # gradients add up over the micro-batches
            total_loss += loss.detach()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return total_loss / args.grad_accum

    times, losses = [], []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(total):
        batch = micro_batches()
        if i == args.warmup:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        start.record()
        loss = step(batch)
        stop.record()
        stop.synchronize()
        seconds = start.elapsed_time(stop) / 1e3
        if i >= args.warmup:
            times.append(seconds)
            losses.append(float(loss))
        log(f"pytorch_step: step {i + 1}/{total}{' (warm-up)' if i < args.warmup else ''}: "
            f"{seconds * 1e3:.1f} ms, loss {float(loss):.4f}")

    mean = statistics.fmean(times)
    tokens_per_second = args.grad_accum * args.mbs * args.seq / mean
    model_flops = flops_per_token * tokens_per_second
    result = {
        "peer": "pytorch",
        "model": spec["name"],
        "model_key": args.model,
        "layers": args.layers,
        "mbs": args.mbs,
        "grad_accum": args.grad_accum,
        "seq": args.seq,
        "compile": args.compile,
        "precision": "fp8-tensorwise" if args.fp8 else "bf16",
        "bf16_layers": (kept_in_bf16(args.layers, args.fp8_bf16_layers_at_start,
                                     args.fp8_bf16_layers_at_end) if args.fp8 else None),
        "attn_implementation": "sdpa",
        "warmup_steps": args.warmup,
        "steps": args.steps,
        "tokens_per_second": tokens_per_second,
        "step_time_mean_s": mean,
        "step_time_median_s": statistics.median(times),
        "step_time_std_s": statistics.stdev(times) if len(times) > 1 else 0.0,
        "step_time_min_s": min(times),
        "step_time_max_s": max(times),
        "raw_step_times_s": times,
        "raw_loss_values": losses,
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30,
        "peak_reserved_gib": torch.cuda.max_memory_reserved() / 2**30,
        "params": n_params,
        "params_matmul": p_matmul,
        "flops_per_token": flops_per_token,
        "model_tflops_per_gpu": model_flops / 1e12,
        "peak_tflops_dense": peak,
        "mfu": model_flops / (peak * 1e12) if peak > 0 else None,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": device_name,
    }
    if not all(math.isfinite(x) for x in losses):
        log("pytorch_step: warning: non-finite loss")
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
