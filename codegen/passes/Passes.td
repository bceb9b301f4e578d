//===- Passes.td - code generation as a pass ---------------*- tablegen -*-===//
//
// The one declaration of every code-generation option: kiln-opt's
// --kiln-select-kernels, --kiln-emit-cuda and --kiln-pipeline take them by
// these names, and kilnc's flags take their help from here
// (codegen/passes/CodegenPass.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_PASSES_TD
#define KILN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

// The options the kernel planners read: --kiln-select-kernels chooses by
// them; the IR then holds every choice, and --kiln-emit-cuda takes none.
defvar kernelChoiceOptions = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90\"",
           "Target architecture">,
    Option<"tf32", "tf32", "bool", "false",
           "f32 matmuls on TF32 tensor cores">,
    Option<"tma", "tma", "bool", "true",
           "Let the tensor memory accelerator copy the operands of the "
           "kernels that can use it (sm_90)">,
    Option<"gemmSchedule", "gemm-schedule",
           "::mlir::kiln::codegen::GemmSchedule",
           "::mlir::kiln::codegen::GemmSchedule::Auto",
           "How the TMA GEMM kernel's consumer warpgroups share the work "
           "(sm_90): auto (the cost model picks per product), cooperative "
           "(one tile among them) or pingpong (whole tiles in turn, one's "
           "epilogue under the other's products)">,
    Option<"gemmCluster", "gemm-cluster",
           "::mlir::kiln::codegen::GemmCluster",
           "::mlir::kiln::codegen::GemmCluster::One",
           "Blocks per thread-block cluster of the TMA GEMM kernel (sm_90), "
           "which share the rhs tile by TMA multicast; auto: two where the "
           "product has two tile rows to pair">,
    Option<"gemmTmaStore", "gemm-tma-store", "bool", "false",
           "The TMA GEMM kernel (sm_90) stores its first result by TMA from "
           "the staged epilogue's shared memory, where one problem's result "
           "has the operands' element type (by default each lane stores its "
           "16-byte runs)">,
    Option<"persistentAttention", "persistent-attention", "bool", "true",
           "Run the Hopper attention kernels persistent (sm_90): one block "
           "per SM takes the (batch * head, tile) work items in turn, "
           "copying the next item's tiles under the last one's products; "
           "false launches one block per work item (causal: per pair of a "
           "long and a short item)">,
    Option<"fusedAttentionBackward", "fused-attention-backward", "bool",
           "false",
           "Run the Hopper attention backward in one pass over the key "
           "tiles (sm_90, head dims of at most 128, the forward's row "
           "log-sum-exp at hand): dQ is added in f32 by bulk reductions "
           "whose order varies, so its last bits may differ run to run (by "
           "default the backward is two deterministic kernels)">,
    Option<"attentionSchedule", "attention-schedule",
           "::mlir::kiln::codegen::AttentionSchedule",
           "::mlir::kiln::codegen::AttentionSchedule::Auto",
           "The Hopper attention forward's schedule (sm_90): auto (pingpong "
           "where the attention is causal), cooperative (the two consumer "
           "warpgroups issue their matrix products as they come) or "
           "pingpong (they take turns, so that one warpgroup's softmax runs "
           "while the tensor cores multiply the other's)">,
];

def KilnEmitCuda : Pass<"kiln-emit-cuda", "mlir::ModuleOp"> {
  let summary = "Generates (and compiles) the CUDA kernels of a module whose "
                "kernels are selected";
  let description = [{
    The last stage of the kiln pipeline, after --kiln-fuse,
    --kiln-plan-memory and --kiln-select-kernels: renders every fusion of
    every entry from the kernel its `kiln_cuda.kernel` records to CUDA C++,
    compiles it with NVRTC to PTX and with nvJitLink to a cubin for the
    architecture the module's `kiln_cuda.target` records, and hands the
    result, the kernels, launches and buffers an artifact holds, to whoever
    built the pass (kilnc writes it as CUDA, PTX or an artifact). It
    chooses nothing: a fusion without its kernel, or a module without its
    target, is an error that asks for --kiln-select-kernels first. The IR is
    not changed. Created from a textual pipeline (kiln-opt, a reproducer)
    the pass has no one to hand the result to: it generates and compiles
    the kernels as a check and drops them.
  }];
  let options = [
    Option<"mergeLaunches", "merge-launches", "bool", "true",
           "Run launches of an entry that may run at once as one kernel">,
    Option<"kernelCache", "kernel-cache", "std::string", /*default=*/"\"\"",
           "Directory of compiled kernels kept between runs (empty: none)">,
    Option<"compile", "compile", "bool", "true",
           "Compile the kernels (false: generate CUDA C++ only)">,
    ListOption<"customKernelDirs", "custom-kernel-dir", "std::string",
               "Directories searched for the CUDA files of kiln.custom ops "
               "after that of the IR file (kilnc -I)">,
    Option<"dataParallel", "data-parallel", "bool", "false",
           "Data-parallel training: the gradients are averaged over the "
           "ranks (NCCL all-reduce), in buckets each issued as soon as the "
           "backward has finished it, on a second stream; train_step runs "
           "forward_backward's launches then apply_update's; with one rank "
           "the artifact trains as without">,
    Option<"bucketBytes", "bucket-bytes", "::mlir::kiln::ByteCount",
           "26214400",
           "Bytes of a gradient bucket (data parallel; 25MiB as PyTorch's "
           "DistributedDataParallel)">,
    Option<"firstBucketBytes", "first-bucket-bytes", "::mlir::kiln::ByteCount",
           "1048576",
           "Bytes of the first gradient bucket, smaller so that "
           "communication starts early (data parallel)">,
  ];
}

def KilnSelectKernels : Pass<"kiln-select-kernels", "mlir::ModuleOp"> {
  let summary = "Records the kernel of every fusion, and the target, as "
                "attributes";
  let description = [{
    Runs the kernel planners of the code generator on every kiln.fusion and
    writes each choice on its fusion as `kiln_cuda.kernel`, an attribute of
    its family (`#kiln_cuda.gemm`, `conv`, `attention`, `rnn`, `reduction`
    for the generic reduction and `row_reduction` for the other reduction
    kernels, `pointwise` for pointwise and optimizer fusions, `pool`,
    `resize`, `embedding`, `batch_norm`, `custom`), and the target, `arch`
    and `tf32`, on the module as `kiln_cuda.target` (#kiln_cuda.target).
    --kiln-emit-cuda then renders what they record. A fusion that already
    has a kernel keeps it once it is checked against the fusion and `arch`
    (a located error where it cannot run it), so a forced choice or a tile
    sweep is an edit of the IR; a module's target must be the pass's.
    kilnc runs it before code generation:
    `--mlir-print-ir-after=kiln-select-kernels` shows the choices.
  }];
  let dependentDialects = ["::mlir::kiln::cuda::KilnCudaDialect"];
  let options = kernelChoiceOptions;
}

#endif // KILN_CODEGEN_PASSES_TD
