#!/usr/bin/env python3
"""kiln against PyTorch, side by side in one run on one GPU.

Runs on the GPU machine from inside the bundle that bench/make_bundle.sh
builds:

    python3 run.py RESULTS.md [--only NAME[,NAME]] [--warmup 20] [--iters 200]

For every workload it times kiln (kiln-run --bench: event-timed replays of the
entry's CUDA graph, median) and the same model written in PyTorch (eager,
torch.compile, torch.compile(mode="reduce-overhead")), timed the same way:
CUDA events around each of --iters back-to-back calls after --warmup calls,
median. It prints one table per workload, whose last line is the ratio
kiln / best torch (speedup = best torch / kiln), and writes them as Markdown
to RESULTS.md with the GPU, the versions, the date and the kiln commit.
The recurrent layers (--only rnn) are also timed against cuDNN and FlashRNN
(each FlashRNN backend in a process of its own, under --rnn-timeout).

    python3 run.py --self-test

checks the table, ratio, parsing and safetensors code without a GPU (and
without PyTorch);

    python3 run.py OUT.md --only rnn --dry-run [--kiln-rnn PATH]

runs the recurrent layers' PyTorch, cuDNN and FlashRNN code on the CPU at
tiny sizes (no kiln, no CUDA graphs; FlashRNN's CPU backend with
--flashrnn-backends vanilla).

This file is the command line and the list of workloads; bench_harness.py
has what they share (safetensors, timing, tables, the Markdown file), and
each family of workloads has a module of its own (bench_train, bench_gemm,
bench_vocab, bench_attention, bench_rnn, bench_conv, bench_transformer,
bench_resnet).
"""

import argparse
import json
import os
import subprocess
import sys

import bench_conv
import bench_gemm
import bench_harness
import bench_resnet
import bench_rnn
import bench_vocab
from bench_attention import attention_workloads
from bench_conv import (CONV_LAYERS, CONV_TORCH_VARIANTS, conv_layout_tables,
                        conv_workloads, drop_conv_data)
from bench_gemm import block_gemm_workloads, run_gemm
from bench_harness import (HERE, check_choices, comma_list, environment,
                           run_workloads, selected, write_results)
from bench_resnet import (RESNET_BATCH, RESNET_PRECISIONS,
                          RESNET_TORCH_VARIANTS, check_resnet_small, run_resnet)
from bench_rnn import (FLASHRNN_FUNCTIONS, RNN_TORCH_VARIANTS, RNN_WORKLOADS,
                       rnn_workloads, rnn_worker)
from bench_train import mlp_module, run_train, sine_block_module
from bench_transformer import BLOCK_SHAPE, run_block, run_byte_lm
from bench_vocab import run_cross_entropy, run_embedding

WORKLOADS = [
    ("sine_block", "train step, sine-denoising block (B4 T32 C64 H4, f32, AdamW)",
     "≤ 0.10 ms (≥ 12x the best torch.compile)",
     lambda a, t: run_train(a, t, "sine_block", sine_block_module)),
    ("mlp", "train step, MLP 8->64 tanh ->1 (B64, f32, AdamW)", "",
     lambda a, t: run_train(a, t, "mlp", mlp_module)),
    ("gemm_big", "GEMM + bias + GELU(tanh), bf16, 8192x4096x4096 (MxKxN)",
     "≥ 1.0x cuBLAS",
     lambda a, t: run_gemm(a, t, "gemm_bias_gelu_8192x4096x4096",
                              8192, 4096, 4096)),
    ("gemm_square", "GEMM + bias + GELU(tanh), bf16, 4096x4096x4096 (MxKxN)",
     "≥ 1.0x cuBLAS",
     lambda a, t: run_gemm(a, t, "gemm_bias_gelu_4096x4096x4096",
                              4096, 4096, 4096)),
    ("gemm_small", "GEMM + bias + GELU(tanh), bf16, 512x1024x4096 (MxKxN)",
     "≥ 1.0x eager",
     lambda a, t: run_gemm(a, t, "gemm_bias_gelu_512x1024x4096",
                              512, 1024, 4096)),
] + block_gemm_workloads() + [
    ("embedding_backward",
     "embedding backward, table [32768, 1024] bf16, 16384 lookups (B8 T2048)",
     "≥ 0.9x the best torch",
     lambda a, t: run_embedding(a, t, "embedding_backward_32768x1024_8x2048",
                                8, 2048, 32768, 1024)),
    ("cross_entropy",
     "cross entropy forward + backward, bf16 logits [8192, 32768] (mean)",
     "≥ 1.0x the best torch, with less peak memory",
     lambda a, t: run_cross_entropy(a, t, "cross_entropy_8192x32768",
                                    8192, 32768)),
] + attention_workloads() + rnn_workloads() + conv_workloads() + [
    ("transformer_block",
     "train step, transformer block B{B} T{T} C{C} {H} heads, causal, bf16, AdamW".format(
         **BLOCK_SHAPE),
     "≤ 1.3 ms (≥ 1.4x torch.compile with CUDA graphs), memory ≤ 437 MiB", run_block),
    ("byte_lm",
     "train step, byte-level GPT sample (4 blocks, d 128, B32 T128), f32, AdamW",
     "tokens/s against torch.compile",
     lambda a, t: run_byte_lm(a, t, "f32")),
    ("byte_lm_bf16",
     "train step, byte-level GPT sample (4 blocks, d 128, B32 T128), bf16, AdamW",
     "tokens/s against torch.compile",
     lambda a, t: run_byte_lm(a, t, "bf16")),
    ("resnet18_32",
     f"train step, ResNet-18 (CIFAR-style, 32x32, 10 classes), B{RESNET_BATCH} "
     "bf16 NHWC, AdamW",
     "", run_resnet),
]


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("output", nargs="?", help="Markdown file for the results")
    p.add_argument("--only", default="", help="comma-separated workloads, or "
                   "prefixes of them (rnn, rnn_lstm, rnn_lstm_12x64): "
                   + ", ".join(w[0] for w in WORKLOADS))
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--optimizers", default="fused,foreach",
                   help="AdamW implementations to try; the fastest is reported")
    p.add_argument("--workdir", default=None,
                   help="where inputs drawn here go (default: the bundle)")
    p.add_argument("--rnn-seconds", type=float, default=2.0,
                   help="recurrent layers: time slow variants over about this "
                   "many seconds of calls (at least 5, at most --iters)")
    p.add_argument("--rnn-timeout", type=float, default=300,
                   help="seconds a FlashRNN backend (or the whole-sequence "
                   "torch.compile) may take to build and run, in its process")
    p.add_argument("--rnn-torch", default="eager,eager_graph,cell,cell_graph",
                   help="the equations in PyTorch to time: "
                   + ", ".join(RNN_TORCH_VARIANTS))
    p.add_argument("--flashrnn-backends", default="triton_fused,cuda",
                   help="FlashRNN backends to try: " + ", ".join(FLASHRNN_FUNCTIONS))
    p.add_argument("--kiln-rnn", default=None,
                   help="the recurrences in PyTorch (default: the bundle's "
                   "kiln_rnn.py, else samples/torch/kiln_rnn.py)")
    p.add_argument("--conv-torch", default="eager,eager_graph",
                   help="convolutions: the PyTorch variants to time: "
                   + ", ".join(CONV_TORCH_VARIANTS))
    p.add_argument("--resnet-torch", default="eager,eager_graph,compile,compile_graph",
                   help="ResNet-18: the PyTorch variants to time: "
                   + ", ".join(RESNET_TORCH_VARIANTS))
    p.add_argument("--resnet-precisions", default="master,autocast",
                   help="ResNet-18: PyTorch's bf16 recipes: master (bf16 "
                   "parameters, f32 master weights: what kiln's --precision=bf16 "
                   "does), autocast (f32 parameters under autocast)")
    p.add_argument("--resnet-optimizers", default="",
                   help="ResNet-18: AdamW implementations to try (fused, "
                   "foreach; default fused, foreach on the CPU); the fastest "
                   "is reported")
    p.add_argument("--resnet-seed", type=int, default=1,
                   help="ResNet-18: kiln-run's --seed for the parameters")
    p.add_argument("--dry-run", action="store_true",
                   help="recurrent layers, convolutions and ResNet-18 on the "
                   "CPU at tiny sizes, without kiln (checks the PyTorch and "
                   "FlashRNN code paths)")
    p.add_argument("--rnn-worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--cpu-check", action="store_true",
                   help="check the PyTorch ResNet-18 against the bundle's "
                   "kiln-ref loss (resnet18_32_check) on the CPU, without a GPU")
    return p


def check_arguments(p, args):
    """The options' lists parsed and checked (p.error on a bad one), the
    per-run state every workload shares set up."""
    args.optimizers = comma_list(args.optimizers)
    args.workdir = args.workdir or HERE
    args.rnn_torch = comma_list(args.rnn_torch)
    args.flashrnn_backends = comma_list(args.flashrnn_backends)
    args.rnn_results = {}
    args.conv_torch = comma_list(args.conv_torch)
    args.conv_cache = {}
    args.resnet_torch = comma_list(args.resnet_torch)
    args.resnet_precisions = comma_list(args.resnet_precisions)
    args.resnet_optimizers = comma_list(args.resnet_optimizers)
    check_choices(p, ((args.rnn_torch, RNN_TORCH_VARIANTS, "--rnn-torch"),
                      (args.flashrnn_backends, FLASHRNN_FUNCTIONS, "--flashrnn-backends"),
                      (args.conv_torch, CONV_TORCH_VARIANTS, "--conv-torch"),
                      (args.resnet_torch, RESNET_TORCH_VARIANTS, "--resnet-torch"),
                      (args.resnet_precisions, RESNET_PRECISIONS, "--resnet-precisions"),
                      (args.resnet_optimizers, ("fused", "foreach"),
                       "--resnet-optimizers")))
    only = set(filter(None, args.only.split(",")))
    unknown = {n for n in only if not any(selected(w[0], {n}) for w in WORKLOADS)}
    if unknown:
        p.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    args.only = only
    if args.dry_run and any(not w[0].startswith(("rnn_", "conv_", "resnet18_"))
                            for w in WORKLOADS if selected(w[0], only)):
        p.error("--dry-run runs the recurrent layers, the convolutions and "
                "ResNet-18 only: add --only rnn, conv or resnet18_32")


def main(argv):
    p = parser()
    args = p.parse_args(argv)
    if args.self_test:
        return self_test()
    if args.cpu_check:
        ok, text = check_resnet_small("cpu")
        print(text)
        return 0 if ok else 1
    if args.rnn_worker:
        return rnn_worker(json.loads(args.rnn_worker))
    if not args.output:
        p.error("give the Markdown output file (or --self-test)")
    check_arguments(p, args)

    import torch
    if not args.dry_run and not torch.cuda.is_available():
        sys.exit("run.py: no CUDA device")
    env = environment(args.dry_run)
    for k, v in env.items():
        print(f"{k}: {v}")
    sections, summary, results = run_workloads(args, WORKLOADS)
    drop_conv_data(args.conv_cache)
    write_results(args.output, env, args, summary,
                  [("Convolutions by layout", conv_layout_tables(results))], sections)
    return 0


# ---------------------------------------------------------------------------
# Self-test (no GPU, no PyTorch).

def self_test():
    for module in (bench_harness, bench_gemm, bench_vocab, bench_rnn, bench_conv,
                   bench_resnet):
        module.self_test()
    # The workloads: one key each, and each family's keys its own prefix.
    keys = [w[0] for w in WORKLOADS]
    assert len(keys) == len(set(keys)), keys
    rnn_keys = [k for k in keys if selected(k, {"rnn"})]
    assert len(rnn_keys) == 2 * len(RNN_WORKLOADS), rnn_keys
    conv_keys = [k for k in keys if selected(k, {"conv"})]
    assert len(conv_keys) == 2 * (2 * len(CONV_LAYERS) + 1), conv_keys
    assert "conv_nhwc_3x3_64_64_56_fwd" in conv_keys
    assert "conv_nchw_7x7s2_3_64_224_fwdbwd_nodx" in conv_keys
    assert [k for k in keys if selected(k, {"conv_nhwc_3x3_64_64_56"})] == [
        "conv_nhwc_3x3_64_64_56_fwd", "conv_nhwc_3x3_64_64_56_fwdbwd"]
    assert len([k for k in keys if selected(k, {"conv_nchw"})]) == len(conv_keys) // 2
    assert not selected("resnet18_32", {"conv"}) and selected("resnet18_32", {"resnet18"})

    # The generated models are what their scripts write (in the checkout).
    models = os.path.join(HERE, "models")
    for script in ("gen_conv.py", "gen_resnet18.py"):
        if os.path.exists(os.path.join(models, script)):
            proc = subprocess.run([sys.executable, os.path.join(models, script), "--check"],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
    print("self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
