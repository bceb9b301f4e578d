//===- KilnCudaDialect.td - kernel decisions as attributes -*- tablegen -*-===//
//
// The code generator's dialect: attributes that record which kernel runs a
// fusion. --kiln-select-kernels writes them (the planners' choices) on each
// kiln.fusion as `kiln_cuda.kernel`, and the target on the module as
// `kiln_cuda.target`; --kiln-emit-cuda renders each fusion from its
// attribute. An edit of the attribute is a forced choice, which both passes
// verify against the fusion and the target.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_DIALECT_KILNCUDADIALECT_TD
#define KILN_CODEGEN_DIALECT_KILNCUDADIALECT_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def KilnCuda_Dialect : Dialect {
  let name = "kiln_cuda";
  let cppNamespace = "::mlir::kiln::cuda";
  let summary = "The CUDA code generator's kernel decisions";
  let description = [{
    Attributes that record the kernel code generation runs for a fusion,
    set on the `kiln.fusion` op as `kiln_cuda.kernel` by
    `--kiln-select-kernels`.
  }];
  let useDefaultAttributePrinterParser = 1;
}

def KilnCuda_GemmKind : I32EnumAttr<"GemmKind", "GEMM kernel", [
  I32EnumAttrCase<"Tma", 0, "tma">,
  I32EnumAttrCase<"Wgmma", 1, "wgmma">,
  I32EnumAttrCase<"Mma", 2, "mma">,
  I32EnumAttrCase<"Tf32", 3, "tf32">,
  I32EnumAttrCase<"Simt", 4, "simt">,
]> {
  let cppNamespace = "::mlir::kiln::cuda";
  let genSpecializedAttr = 0;
}

class KilnCuda_Attr<string name, string attrMnemonic>
    : AttrDef<KilnCuda_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def KilnCuda_GemmAttr : KilnCuda_Attr<"Gemm", "gemm"> {
  let summary = "The kernel of a GEMM fusion";
  let description = [{
    `#kiln_cuda.gemm<KIND, tile = MxNxK, stages = S[, pingpong][, cluster =
    C][, split = P][, tma_store]>`: the kernel (`tma`: warpgroup MMA on
    operands the tensor memory accelerator copies; `wgmma`: warpgroup MMA
    filled by cp.async; `mma`: mma.sync; `tf32`: mma.sync on TF32; `simt`:
    f32 FMA) and its block tile, which is one of the kernel's tile table
    (codegen/cuda/gemm/GemmConfig.cpp, whose entry gives the warps and blocks
    per SM); the shared-memory stages of that entry; the ping-pong schedule of
    the TMA kernel; blocks per thread-block cluster sharing the rhs tile by TMA
    multicast; the splits of K (each writes f32 partials a second kernel adds);
    the first result stored by TMA from the staged epilogue.
  }];
  let parameters = (ins
    EnumParameter<KilnCuda_GemmKind>:$kind,
    "int64_t":$tileM, "int64_t":$tileN, "int64_t":$tileK,
    "int64_t":$stages,
    "bool":$pingpong,
    "int64_t":$cluster,
    "int64_t":$split,
    "bool":$tmaStore
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_ConvKind : I32EnumAttr<"ConvKind", "convolution kernel", [
  I32EnumAttrCase<"Tma", 0, "tma">,
  I32EnumAttrCase<"Wgmma", 1, "wgmma">,
  I32EnumAttrCase<"Mma", 2, "mma">,
  I32EnumAttrCase<"Tf32", 3, "tf32">,
  I32EnumAttrCase<"Depthwise", 4, "depthwise">,
]> {
  let cppNamespace = "::mlir::kiln::cuda";
  let genSpecializedAttr = 0;
}

def KilnCuda_ConvAttr : KilnCuda_Attr<"Conv", "conv"> {
  let summary = "The implicit-GEMM kernel of a conv fusion";
  let description = [{
    `#kiln_cuda.conv<KIND, tile = MxNxK[, warps = MxN], stages = S,
    blocks_per_sm = B[, split = P]>`: the kernel (`tma`: warpgroup MMA on
    operands the tensor memory accelerator copies, conv_tma.cuh; `wgmma`:
    warpgroup MMA, conv_wgmma.cuh; `mma`: mma.sync on bf16/f16 and `tf32`
    on f32, conv_igemm.cuh) and its block tile over the implicit GEMM, any
    tile of the kernel's template rather than only the planner's tables
    (codegen/cuda/conv/ConvPlan.cpp); the warps of an mma tile; its
    shared-memory stages; the blocks per SM it is launched for; the splits of
    the reduction (each writes f32 partials a second kernel adds).
    `#kiln_cuda.conv<depthwise>`: the direct kernels of depthwise
    convolutions (conv_depthwise.cuh), whose launches follow from the shapes.
  }];
  let parameters = (ins
    EnumParameter<KilnCuda_ConvKind>:$kind,
    "int64_t":$tileM, "int64_t":$tileN, "int64_t":$tileK,
    "int64_t":$warpsM, "int64_t":$warpsN,
    "int64_t":$stages,
    "int64_t":$blocksPerSm,
    "int64_t":$split
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_AttentionKind : I32EnumAttr<"AttentionKind", "attention kernel", [
  I32EnumAttrCase<"Simt", 0, "simt">,
  I32EnumAttrCase<"Wgmma", 1, "wgmma">,
]> {
  let cppNamespace = "::mlir::kiln::cuda";
  let genSpecializedAttr = 0;
}

def KilnCuda_AttentionAttr : KilnCuda_Attr<"Attention", "attention"> {
  let summary = "The flash-attention kernels of an attention fusion";
  let description = [{
    `#kiln_cuda.attention<simt, tile = T>`: the CUDA-core kernels
    (attention_fwd.cuh, attention_bwd.cuh) with T-row tiles of queries and
    keys (64, 32 or 16).

    `#kiln_cuda.attention<wgmma, forward = BMxBNxS[, pingpong]
    [, persistent = P]>` and, for the backward, `#kiln_cuda.attention<wgmma,
    dq = BMxBNxS, dkdv = BMxBNxS[, separate_dkdv][, persistent = P]>` or
    `#kiln_cuda.attention<wgmma, fused, dkdv = BMxBNxS[, persistent = P]>`:
    the Hopper tensor-core kernels (attention_wgmma_*.cuh), each given as the
    rows of the tile a block keeps (one consumer warpgroup per 64), the rows
    of the tiles it streams by TMA and its pipeline stages. `pingpong`: the
    forward's two consumer warpgroups take turns issuing their products;
    `separate_dkdv`: the key gradients as two launches (dK, then dV), where
    both accumulators would not fit in registers; `fused`: the one-pass
    backward (attention_wgmma_bwd_fused.cuh) that adds dQ in f32 by bulk
    reductions; `persistent = P`: at most P blocks (one per SM) take the
    work items in turn, instead of a block per item.
  }];
  let parameters = (ins
    EnumParameter<KilnCuda_AttentionKind>:$kind,
    "int64_t":$tile,
    ArrayRefParameter<"int64_t">:$forward,
    ArrayRefParameter<"int64_t">:$dq,
    ArrayRefParameter<"int64_t">:$dkdv,
    "bool":$pingpong,
    "bool":$separateDkdv,
    "bool":$fused,
    "int64_t":$persistent
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_RnnSync : I32EnumAttr<"RnnSync", "how a recurrent group meets", [
  I32EnumAttrCase<"Block", 0, "block">,
  I32EnumAttrCase<"Cluster", 1, "cluster">,
  I32EnumAttrCase<"Grid", 2, "grid">,
]> {
  let cppNamespace = "::mlir::kiln::cuda";
  let genSpecializedAttr = 0;
}

def KilnCuda_RnnAttr : KilnCuda_Attr<"Rnn", "rnn"> {
  let summary = "The persistent recurrent kernel of an rnn fusion";
  let description = [{
    `#kiln_cuda.rnn<SYNC, batch_tile = BT, blocks = K, splits = KS>`: the
    configuration of kernels/rnn.cuh (codegen/cuda/rnn/RnnPlan.h): each group
    of BT batch rows (16, 32 or 64) of one head runs on K blocks, each
    keeping its share of the head's units (whole 8-unit columns) of the
    recurrent matrix, with the reduction over the units split KS ways
    (1-16) among its warps; the blocks of a group meet each step in one
    block (`block`, K = 1), a thread-block cluster (`cluster`) or the
    whole grid of a cooperative launch (`grid`), as K and the target
    allow.
  }];
  let parameters = (ins
    EnumParameter<KilnCuda_RnnSync>:$sync,
    "int64_t":$batchTile,
    "int64_t":$blocks,
    "int64_t":$splits
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_ReductionMode : I32EnumAttr<"ReductionMode",
    "how the generic reduction kernel walks its input", [
  I32EnumAttrCase<"Rows", 0, "rows">,
  I32EnumAttrCase<"Columns", 1, "columns">,
]> {
  let cppNamespace = "::mlir::kiln::cuda";
  let genSpecializedAttr = 0;
}

def KilnCuda_ReductionAttr : KilnCuda_Attr<"Reduction", "reduction"> {
  let summary = "The generic reduction kernel of a reduction fusion";
  let description = [{
    `#kiln_cuda.reduction<MODE, splits = S>`: the generic reduction of
    kernels/reduce_dims.cuh (codegen/cuda/reduction/GenericReduction.cpp),
    which reduce_sum/mean/max/min, argmax, mse_loss, binary_cross_entropy and
    the composed reductions without a row kernel run on. MODE is `rows` where
    the innermost kept-or-reduced group of the input is reduced (a group of
    threads walks each output's contiguous elements), `columns` otherwise
    (threads along the contiguous kept columns); the input's shape decides
    it. The reduced range of every output is split over S blocks (1 to
    1024, each a nonempty share) that leave partials in scratch for a
    second, fixed-order pass when S > 1.
  }];
  let parameters = (ins
    EnumParameter<KilnCuda_ReductionMode>:$mode,
    "int64_t":$splits
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_RowReductionAttr : KilnCuda_Attr<"RowReduction", "row_reduction"> {
  let summary = "The row, norm, softmax, loss and multi-tensor kernels of a "
                "reduction fusion";
  let description = [{
    `#kiln_cuda.row_reduction<blocks = B>`: the reduction fusions that the
    generic reduction does not run (softmax and log_softmax, the norms and
    their gradients, cross entropy, composed row patterns, multi-tensor
    reductions; codegen/cuda/reduction/ReductionKernels.h). Their rows, steps
    and vector widths follow from the shapes and the templates; B is the
    number of blocks they size their grids for (twice the target's SMs times
    its resident blocks by default): the splits of the norms' parameter
    gradients, the chunks of a multi-tensor reduction and the blocks of the
    element kernels.
  }];
  let parameters = (ins "int64_t":$blocks);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_PointwiseAttr : KilnCuda_Attr<"Pointwise", "pointwise"> {
  let summary = "The loop kernels of a pointwise or optimizer fusion";
  let description = [{
    `#kiln_cuda.pointwise<threads = [T, ...], widths = [W, ...], blocks =
    [B, ...]>`: the kernels of kernels/pointwise.cuh (one group of results
    of one root shape) or kernels/optimizer.cuh (several groups, each on a
    range of the launch's blocks), launched one after the other
    (codegen/cuda/pointwise/PointwiseEmitter.h). `threads` holds the block
    size of each kernel (whole warps, at most 1024); `widths` and `blocks`
    hold, for each group in the order of the kernels, the elements a thread
    moves per step with 16-byte accesses (1, 2, 4 or 8, at most what the
    group's tensors allow) and the blocks of its grid-stride loop. How the
    results fall into groups and kernels follows from the fusion.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$threads,
    ArrayRefParameter<"int64_t">:$widths,
    ArrayRefParameter<"int64_t">:$blocks
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_PoolAttr : KilnCuda_Attr<"Pool", "pool"> {
  let summary = "The grid-stride kernels of a pool fusion";
  let description = [{
    `#kiln_cuda.pool<vector = V, threads = [T, ...], blocks = [B, ...]
    [, argmax]>`: the kernels of kernels/pool.cuh, each thread taking V
    channels (1 where channels are not innermost), with the block size and
    grid of each launch in order. `argmax`: the gradient of max pooling
    leaves each window's argmax in scratch (a first launch) and gathers from
    it (a second) instead of recomputing it, as it does where windows
    overlap much.
  }];
  let parameters = (ins
    "int64_t":$vector,
    ArrayRefParameter<"int64_t">:$threads,
    ArrayRefParameter<"int64_t">:$blocks,
    "bool":$argmax
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_ResizeAttr : KilnCuda_Attr<"Resize", "resize"> {
  let summary = "The grid-stride kernel of a resize fusion";
  let description = [{
    `#kiln_cuda.resize<threads = T, blocks = B>`: the block size (whole
    warps, at most 1024) and grid of the gradient of kiln.resize
    (kernels/resize.cuh).
  }];
  let parameters = (ins "int64_t":$threads, "int64_t":$blocks);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_CustomAttr : KilnCuda_Attr<"Custom", "custom"> {
  let summary = "The launch of a user's kernel";
  let description = [{
    `#kiln_cuda.custom<blocks = B>`: the grid of a kiln.custom kernel
    (kernels/custom_op.cuh); its block size is the op's `block_size`, which
    the user's kernel is written for.
  }];
  let parameters = (ins "int64_t":$blocks);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_EmbeddingAttr : KilnCuda_Attr<"Embedding", "embedding"> {
  let summary = "The kernels of an embedding gradient";
  let description = [{
    `#kiln_cuda.embedding<vector = V>`: the elements of a table row that a
    thread moves at once in the kernels of kernels/embedding.cuh (1, 2, 4 or
    8, at most what the row's width and element size allow); the radix
    passes and tiles follow from the shapes.
  }];
  let parameters = (ins "int64_t":$vector);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_BatchNormAttr : KilnCuda_Attr<"BatchNorm", "batch_norm"> {
  let summary = "The kernels of a batch_norm fusion";
  let description = [{
    `#kiln_cuda.batch_norm<blocks = B>`: the kernels of
    kernels/batch_norm.cuh size the split of the statistics' reduction and
    the grid of their element kernels for B blocks (twice the target's SMs
    times its resident blocks by default); tiles and vector widths follow
    from the shapes.
  }];
  let parameters = (ins "int64_t":$blocks);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnCuda_TargetAttr : KilnCuda_Attr<"Target", "target"> {
  let summary = "The target the kernels of a module are chosen for";
  let description = [{
    `#kiln_cuda.target<"sm_90"[, tf32]>`, set on the module as
    `kiln_cuda.target` by `--kiln-select-kernels`: the architecture the
    recorded kernels are sized for and compiled to, and whether f32 matrix
    products and recurrences run on TF32 tensor cores (one pass) rather
    than the three-pass TF32 emulation of f32 the f32 kernels otherwise use.
  }];
  let parameters = (ins StringRefParameter<"architecture">:$arch,
                        "bool":$tf32);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // KILN_CODEGEN_DIALECT_KILNCUDADIALECT_TD
