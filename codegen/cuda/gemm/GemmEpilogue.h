//===- GemmEpilogue.h - the fused epilogue of gemm kernels ------*- C++ -*-===//
//
// The epilogue of a gemm fusion as a generated functor the kernel templates
// call (kernels/gemm_common.cuh), written by the ScalarEmitter that the
// pointwise kernels use, evaluating each op at output element (row, col)
// from the product's register: every intermediate rounded to its tensor's
// element type as the reference does.
//
//   struct Epilogue {
//     // The values problem g yields at row r (= batch * M + m), column c,
//     // given its f32 product acc.
//     static void values<g>(const Params &, idx r, idx c, float acc,
//                           float (&res)[results]);
//     static void store<g>(const Params &, idx r, idx c, float acc);
//     // Columns c and c + 1 (c even), with one vector store when legal;
//     // _in: both known to lie inside the output (no column test).
//     static void store_pair<g>(..., float acc0, float acc1);
//     static void store_pair_in<g>(..., float acc0, float acc1);
//     // Columns c .. c + 7 (c a multiple of 8) inside the output, each
//     // result with 16-byte stores: the staged epilogue of gemm_tma.cuh.
//     static void store_run_in<g>(..., const float (&acc)[kRun]);
//     // The same with the first result to the shared staging address
//     // `slot` (one problem, a TMA store of the kernel writes it).
//     static void store_run_staged(..., const float (&acc)[kRun],
//                                  unsigned slot);
//     // For the staged epilogue of the TMA kernel: whether some problem
//     // reads a tensor of the product's shape (false for other kernels),
//     // and columns c .. c + n - 1 of row r of those it reads asked of the
//     // L2 (a prefetch per 128-byte line).
//     static constexpr bool kPrefetch;
//     static void prefetch_row<g>(const Params &, idx r, idx c, idx n);
//   };
//
// With several problems, rows are stacked problem after problem (r =
// g * OUT_ROWS + row of problem g): store, store_pair and store_pair_in
// (and store_run_in, prefetch_row) dispatch on g to the problem's functions (suffixed
// with g).
//
// It uses the generated `Config` (N, OUT_ROWS), `Params` (in<i>, out<i>)
// and `idx` (the index type) of the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMM_GEMMEPILOGUE_H
#define KILN_CODEGEN_CUDA_GEMM_GEMMEPILOGUE_H

#include "codegen/cuda/gemm/GemmPlan.h"

#include <string>

namespace mlir::kiln::codegen {

/// The file-scope tables the epilogue uses, then `struct Epilogue`; with
/// `runs`, also `store_run_in` (runs of 8 columns, for the staged epilogue
/// of the TMA kernel); `kPrefetch`, and with `prefetch` (the staged
/// epilogue) `prefetch_row`; with `tmaStore` (one problem), also
/// `store_run_staged`.
FailureOr<std::string> writeGemmEpilogue(const GemmPlan &plan, FusionOp fusion,
                                         bool runs, bool prefetch,
                                         bool tmaStore = false);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMM_GEMMEPILOGUE_H
