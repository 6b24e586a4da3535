# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
"""The FP8 peer's projections: torchao's float8 "tensorwise" recipe, written out in plain PyTorch.

What a PyTorch user gets from torchao's convert_to_float8_training (and torchtitan's float8
converter) with its default recipe, without the torchao dependency (the GPU machine has none):
each decoder projection's GEMMs through torch._scaled_mm with dynamic per-tensor scales, the
scale taken from the tensor's own amax just before its cast:

- forward: input and weight in E4M3, output bf16, fast accumulation (as torchao's default);
- backward: the output gradient in E5M2; input gradient = grad x weight and weight gradient =
  grad^T x input, each an FP8 GEMM with full-precision accumulation; the weight gradient in fp32
  (the fp32 master's), as tprimat accumulates it.

The embedding and the LM head stay bf16, as in tprimat's FP8 runs (and torchao's default filter,
which skips the output projection in torchtitan). m, n, k must be multiples of 16 (every
projection of the three models at mbs x seq a multiple of 16).
"""

from __future__ import annotations

E4M3_MAX = 448.0
E5M2_MAX = 57344.0
# The decoder layers' projections (Hugging Face's Llama, Qwen2 and Mistral modules).
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def kept_in_bf16(layers: int, at_start: int, at_end: int) -> list[int]:
    """The decoder layers (0-based) kept in bf16: the first `at_start` and the last `at_end`."""
    return [i for i in range(layers) if i < at_start or i >= layers - at_end]


def bf16_ends_error(layers: int, at_start: int, at_end: int) -> str:
    """Why `at_start` and `at_end` layers kept in bf16 do not suit `layers`; "" where they do."""
    if min(at_start, at_end) < 0 or at_start + at_end >= layers:
        return (f"--fp8-bf16-layers-at-start/-end {at_start}/{at_end}: each 0 or more, and "
                f"together fewer than --layers {layers} (one layer at least in FP8)")
    return ""


def make_float8_linear(torch):
    """The nn.Module that replaces an nn.Linear (same parameters, FP8 GEMMs)."""
    e4m3, e5m2 = torch.float8_e4m3fn, torch.float8_e5m2

    def cast(x, dtype, most):
        """x in `dtype` scaled so its amax lands on `most`, and the scale's inverse (fp32)."""
        amax = x.detach().abs().max().to(torch.float32).clamp(min=1e-12)
        scale = most / amax
        return (x.to(torch.float32) * scale).clamp(-most, most).to(dtype), scale.reciprocal()

    class Float8Matmul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            rows = x.reshape(-1, x.shape[-1])
            x8, x_inv = cast(rows, e4m3, E4M3_MAX)
            w8, w_inv = cast(weight, e4m3, E4M3_MAX)
            out = torch._scaled_mm(x8, w8.t(), scale_a=x_inv, scale_b=w_inv,
                                   bias=None if bias is None else bias.to(torch.bfloat16),
                                   out_dtype=torch.bfloat16, use_fast_accum=True)
            ctx.save_for_backward(x8, x_inv, w8, w_inv)
            ctx.has_bias = bias is not None
            ctx.input_shape = x.shape
            return out.reshape(*x.shape[:-1], weight.shape[0])

        @staticmethod
        def backward(ctx, grad):
            x8, x_inv, w8, w_inv = ctx.saved_tensors
            g = grad.reshape(-1, grad.shape[-1])
            g8, g_inv = cast(g, e5m2, E5M2_MAX)
            # dX = g @ W: W [out, in] as the column-major right operand.
            grad_x = torch._scaled_mm(g8, w8.t().contiguous().t(), scale_a=g_inv,
                                      scale_b=w_inv, out_dtype=torch.bfloat16,
                                      use_fast_accum=False)
            # dW = g^T @ x: g^T row-major, x column-major.
            grad_w = torch._scaled_mm(g8.t().contiguous(), x8.t().contiguous().t(),
                                      scale_a=g_inv, scale_b=x_inv, out_dtype=torch.float32,
                                      use_fast_accum=False)
            grad_b = g.to(torch.float32).sum(0) if ctx.has_bias else None
            return grad_x.reshape(ctx.input_shape), grad_w, grad_b

    class Float8Linear(torch.nn.Module):
        def __init__(self, linear):
            super().__init__()
            self.weight = linear.weight
            self.bias = linear.bias

        def forward(self, x):
            if x.dtype != torch.bfloat16:
                x = x.to(torch.bfloat16)
            # Autocast off: the FP8 GEMMs set their own types.
            with torch.autocast("cuda", enabled=False):
                return Float8Matmul.apply(x, self.weight, self.bias)

    return Float8Linear


def convert_to_float8(torch, model, bf16_at_start: int = 0, bf16_at_end: int = 0) -> int:
    """Replaces the decoder projections of `model` by Float8Linear modules, but for the first
    `bf16_at_start` and last `bf16_at_end` decoder layers (kept in bf16, as NeMo's current-scaling
    recipe keeps one at each end; torchao's default converts them all); returns how many."""
    float8_linear = make_float8_linear(torch)
    layers = model.model.layers  # Hugging Face's decoder stack (Llama, Qwen2, Mistral)
    kept = set(kept_in_bf16(len(layers), bf16_at_start, bf16_at_end))
    swapped = 0
    for index, layer in enumerate(layers):
        if index in kept:
            continue
        for module in list(layer.modules()):
            for name in PROJECTIONS:
                child = getattr(module, name, None)
                if isinstance(child, torch.nn.Linear):
                    setattr(module, name, float8_linear(child))
                    swapped += 1
    return swapped
