//===- gemm_tma_schedule.cuh - the TMA GEMM's work items and their walk ---===//
//
// The tile scheduler of gemm_tma.cuh: what a work item is (an output tile
// of one stacked problem and K split per block of a cluster) and which
// items each role of a block takes. Blocks are persistent; cluster c of
// the grid's `clusters` walks items c, c + clusters, ... The producer
// copies every item of its cluster; cooperative consumers share each item,
// ping-pong consumers take every other one.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_common.cuh"

namespace kiln {
namespace gemm {

// A unit of work: one output tile of one stacked problem and K split per
// block of a cluster, CLUSTER_M tiles one above the other (the cluster's
// blocks share the rhs tile). `rank`: the block's rank in its cluster.
template <class Cfg> struct tma_work {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  static constexpr int CM = Cfg::CLUSTER_M;
  // Rows of tiles of the clusters, and their group in the tile order (the
  // group_m tile rows of tile_of).
  static constexpr idx TILES_MC = (S::TILES_M + CM - 1) / CM;
  static constexpr idx GROUP_MC = (Cfg::GROUP_M + CM - 1) / CM;
  static constexpr long long TILES = (long long)TILES_MC * S::TILES_N;
  static constexpr long long COUNT =
      (long long)Cfg::GROUPS * Cfg::SPLIT * TILES;

  idx m0, n0;
  int problem, split, ktBegin, nk;
  // The block's tile lies past the rows (a cluster's last tile row when
  // TILES_M is not a multiple of CLUSTER_M): its lhs is not copied and its
  // epilogue does not run.
  bool outside;

  static __device__ __forceinline__ tma_work at(long long w, int rank = 0) {
    tma_work x;
    const long long z = w / TILES;
    idx tm, tn;
    grouped_tile<idx>((idx)(w % TILES), TILES_MC, S::TILES_N, GROUP_MC, tm, tn);
    x.problem = (int)(z / Cfg::SPLIT);
    x.split = (int)(z % Cfg::SPLIT);
    x.m0 = (tm * CM + rank) * Cfg::BM;
    x.n0 = tn * Cfg::BN;
    x.outside = CM > 1 && x.m0 >= Cfg::ROWS;
    x.ktBegin = x.split * Cfg::KT_PER_SPLIT;
    const int ktEnd = S::KT_ALL < x.ktBegin + Cfg::KT_PER_SPLIT
                          ? S::KT_ALL
                          : x.ktBegin + Cfg::KT_PER_SPLIT;
    x.nk = ktEnd > x.ktBegin ? ktEnd - x.ktBegin : 0;
    return x;
  }
};

// The walk of a block's cluster over the work items.
template <class Cfg> struct tma_scheduler {
  typedef tma_work<Cfg> Work;
  long long cluster, clusters;

  __device__ __forceinline__ explicit tma_scheduler(const launch_ctx &ctx)
      : cluster(ctx.block.x / Cfg::CLUSTER_M),
        clusters(ctx.grid.x / Cfg::CLUSTER_M) {}

  // The producer's first item and its stride: every item of the cluster.
  __device__ __forceinline__ long long producer_first() const {
    return cluster;
  }
  __device__ __forceinline__ long long producer_step() const {
    return clusters;
  }
  // Cooperative: every consumer takes every item. Ping-pong: consumer c
  // takes the cluster's items c, c + 2, ...; the other's in between are
  // skipped.
  __device__ __forceinline__ long long consumer_first(int consumer) const {
    return cluster + (Cfg::PINGPONG ? (long long)consumer * clusters : 0);
  }
  __device__ __forceinline__ long long consumer_step() const {
    return clusters * (Cfg::PINGPONG ? 2 : 1);
  }
  // The cluster's second item: the items from it on follow another of the
  // block (ping-pong: whose turn comes first).
  __device__ __forceinline__ long long second_item() const {
    return cluster + clusters;
  }
  // The item the other ping-pong consumer takes after w, if any.
  __device__ __forceinline__ bool other_follows(long long w) const {
    return w + clusters < Work::COUNT;
  }
  __device__ __forceinline__ Work other_after(long long w) const {
    return Work::at(w + clusters);
  }
};

} // namespace gemm
} // namespace kiln
