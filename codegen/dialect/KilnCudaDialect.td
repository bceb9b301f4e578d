//===- KilnCudaDialect.td - kernel decisions as attributes -*- tablegen -*-===//
//
// The code generator's dialect: attributes that record which kernel runs a
// fusion. --kiln-select-kernels writes them (the planners' choices) on each
// kiln.fusion as `kiln_cuda.kernel`; code generation renders the fusion from
// the attribute. An edit of the attribute is a forced choice, which the
// selection pass verifies against the fusion and the target.
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
    (codegen/cuda/GemmConfig.cpp, whose entry gives the warps and blocks per
    SM); the shared-memory stages of that entry; the ping-pong schedule of
    the TMA kernel; blocks per thread-block cluster sharing the rhs tile by
    TMA multicast; the splits of K (each writes f32 partials a second kernel
    adds); the first result stored by TMA from the staged epilogue.
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

#endif // KILN_CODEGEN_DIALECT_KILNCUDADIALECT_TD
