//===- Passes.td - code generation as a pass ---------------*- tablegen -*-===//

#ifndef KILN_PIPELINE_PASSES_TD
#define KILN_PIPELINE_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnCodegen : Pass<"kiln-codegen", "mlir::ModuleOp"> {
  let summary = "Generates (and compiles) the CUDA kernels of a planned module";
  let description = [{
    The last stage of the kiln pipeline, after --kiln-fuse and
    --kiln-plan-memory: runs the code generator on the module (every fusion
    of every entry to CUDA C++, NVRTC to PTX, nvJitLink to a cubin for
    `arch`) and hands the result, the kernels, launches and buffers an
    artifact holds, to whoever built the pass (kilnc writes it as CUDA, PTX
    or an artifact). The IR is not changed. Created from a textual pipeline
    (kiln-opt, a reproducer) the pass has no one to hand the result to: it
    generates and compiles the kernels as a check and drops them.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90\"",
           "Target architecture">,
    Option<"tf32", "tf32", "bool", "false",
           "f32 matmuls on TF32 tensor cores">,
    Option<"mergeLaunches", "merge-launches", "bool", "true",
           "Run launches of an entry that may run at once as one kernel">,
    Option<"tma", "tma", "bool", "true",
           "Let the tensor memory accelerator copy the operands of the "
           "kernels that can use it (sm_90)">,
    Option<"gemmSchedule", "gemm-schedule", "std::string",
           /*default=*/"\"auto\"",
           "The TMA GEMM kernel's consumer schedule: auto (the cost model "
           "picks), cooperative or pingpong">,
    Option<"gemmCluster", "gemm-cluster", "std::string",
           /*default=*/"\"1\"",
           "Blocks per thread-block cluster of the TMA GEMM kernel, which "
           "share the rhs tile: 1, 2 or auto (two where there are two tile "
           "rows to pair)">,
    Option<"persistentAttention", "persistent-attention", "bool", "true",
           "Run the Hopper attention kernels persistent: one block per SM "
           "takes the work items in turn (false: a block per work item, or "
           "causal pair of items)">,
    Option<"fusedAttentionBackward", "fused-attention-backward", "bool",
           "false",
           "Run the Hopper attention backward in one pass over the key "
           "tiles, adding dQ in f32 by bulk reductions (faster, not "
           "deterministic)">,
    Option<"attentionSchedule", "attention-schedule", "std::string",
           /*default=*/"\"auto\"",
           "The Hopper attention forward's consumer schedule: auto "
           "(pingpong where the attention is causal), cooperative, or "
           "pingpong (the two consumer warpgroups take turns issuing their "
           "products, so that one's softmax runs under the other's)">,
    Option<"gemmTmaStore", "gemm-tma-store", "bool", "false",
           "Store the TMA GEMM kernel's first result by TMA from the staged "
           "epilogue's shared memory">,
    Option<"kernelCache", "kernel-cache", "std::string", /*default=*/"\"\"",
           "Directory of compiled kernels kept between runs (empty: none)">,
    Option<"compile", "compile", "bool", "true",
           "Compile the kernels (false: generate CUDA C++ only)">,
    ListOption<"customKernelDirs", "custom-kernel-dir", "std::string",
               "Directories searched for the CUDA files of kiln.custom ops "
               "after that of the IR file (kilnc -I)">,
    Option<"dataParallel", "data-parallel", "bool", "false",
           "Average the gradients over the ranks: buckets in the order the "
           "backward finishes them, each all-reduced as soon as it is "
           "complete; train_step runs forward_backward's launches then "
           "apply_update's">,
    Option<"bucketBytes", "bucket-bytes", "::mlir::kiln::ByteCount",
           "26214400",
           "Bytes of a gradient bucket (data parallel), e.g. 25MiB">,
    Option<"firstBucketBytes", "first-bucket-bytes", "::mlir::kiln::ByteCount",
           "1048576",
           "Bytes of the first gradient bucket (data parallel), e.g. 1MiB">,
  ];
}

#endif // KILN_PIPELINE_PASSES_TD
