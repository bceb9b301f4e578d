//===- tma.cuh - the tensor memory accelerator and its barriers (sm_90) ---===//
//
// Hopper's TMA copies a box of a tensor in global memory to shared memory
// by itself, addressed by a tensor map the runtime encodes (the artifact's
// tensor-map arguments): tiled boxes, or im2col columns of convolution
// windows, zero-filled outside the tensor and swizzled as wgmma reads them.
// A copy completes on an mbarrier by the bytes it delivers, so a producer
// thread issues copies and consumer warpgroups wait for them without any
// address arithmetic of their own. Also here: the barriers' phases, named
// barriers over a subset of a block's warps, and the register reallocation
// (setmaxnreg) of warp-specialised kernels.
//
// The kernel takes a tensor map as a `const __grid_constant__
// kiln::tensor_map` parameter and passes its address (parameter space,
// reached generically) to the copies.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln {

// A CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) tensor_map {
  unsigned long long opaque[16];
};

namespace tma {

__device__ __forceinline__ unsigned long long address_of(const tensor_map &m) {
  return reinterpret_cast<unsigned long long>(&m);
}

// Brings the map's descriptor into the cache before the first copy.
__device__ __forceinline__ void prefetch(const tensor_map &m) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(address_of(m)) : "memory");
}

// mbarriers: 8-byte words in shared memory, addressed by shared address.
__device__ __forceinline__ void barrier_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar),
               "r"(count)
               : "memory");
}
// Makes initialised barriers visible to the copy engine and the other
// threads (with a block-wide barrier after it).
__device__ __forceinline__ void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar)
               : "memory");
}
// Arrives and announces `bytes` of copies that complete the phase.
__device__ __forceinline__ void arrive_expect_bytes(unsigned bar,
                                                    unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
      "r"(bytes)
      : "memory");
}
// Waits until the phase of parity `parity` has completed. A barrier starts
// in phase 0, so waiting for parity 1 passes at once: a producer's first
// wait for free stages.
__device__ __forceinline__ void wait(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile("{\n"
                 "  .reg .pred p;\n"
                 "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "  selp.u32 %0, 1, 0, p;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}

// The box at (c0, c1) of a 2-D tiled map into shared address dst.
__device__ __forceinline__ void copy_2d(unsigned dst, const tensor_map &m,
                                        unsigned bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
               "l"(address_of(m)), "r"(c0), "r"(c1), "r"(bar)
               : "memory");
}

// The box at (c0, c1) of a 2-D tiled map into shared address dst of every
// block of the cluster in `blocks` (a mask of cluster ranks), completing on
// the mbarrier at `bar` in each.
__device__ __forceinline__ void copy_2d_multicast(unsigned dst,
                                                  const tensor_map &m,
                                                  unsigned bar, int c0, int c1,
                                                  unsigned short blocks) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
               "l"(address_of(m)), "r"(c0), "r"(c1), "r"(bar), "h"(blocks)
               : "memory");
}

// The box at (c0, c1, c2, c3) of a 4-D tiled map into shared address dst.
__device__ __forceinline__ void copy_4d(unsigned dst, const tensor_map &m,
                                        unsigned bar, int c0, int c1, int c2,
                                        int c3) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
               "l"(address_of(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
               : "memory");
}

// `bytes` (a multiple of 16) contiguous bytes from global src (16-byte
// aligned) into shared address dst, without a tensor map.
__device__ __forceinline__ void copy_bytes(unsigned dst, const void *src,
                                           unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// Bulk reductions from shared into global memory: `bytes` (a multiple of
// 16) of f32 at shared address src added element-wise to global dst
// (16-byte aligned), in the issuing thread's current bulk group. The
// issuer's commit closes the group; wait_read<N> returns once at most N of
// its groups still read shared memory (the rest may be overwritten),
// wait_done<N> once their writes are complete too. Shared memory written by
// ordinary stores must be fenced for the async proxy first (fence_async).
__device__ __forceinline__ void reduce_add_bytes(float *dst, unsigned src,
                                                 unsigned bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"
               " [%0], [%1], %2;\n" ::"l"(dst),
               "r"(src), "r"(bytes)
               : "memory");
}
// A box of the map's tensor, origin (x0, x1) in its {contiguous, outer}
// dims, stored from shared address src (laid out and swizzled as a copy of
// that box would have left it), in the issuer's current bulk group. The
// copy engine drops what lies past the tensor, so a tile's overhang needs
// no test.
__device__ __forceinline__ void store_2d(const tensor_map &m, unsigned src,
                                         int x0, int x1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
               " [%0, {%2, %3}], [%1];\n" ::"l"(address_of(m)),
               "r"(src), "r"(x0), "r"(x1)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void bulk_wait_done() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// Orders this thread's ordinary shared-memory stores before later reads by
// the async proxy (wgmma operands, bulk copies), once a barrier has passed.
__device__ __forceinline__ void fence_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// The im2col column of a 4-D (NHWC) map: pixels from the window origin
// (w, h) of image n on, channels from c, each shifted by the filter tap
// (dw, dh).
__device__ __forceinline__ void
copy_im2col_4d(unsigned dst, const tensor_map &m, unsigned bar, int c, int w,
               int h, int n, unsigned short dw, unsigned short dh) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier:"
               ":complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};\n" ::"r"(dst),
               "l"(address_of(m)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar),
               "h"(dw), "h"(dh)
               : "memory");
}

// Thread 0 of the block initialises the `full` and `empty` mbarriers of
// `stages` pipeline stages (full(s) and empty(s): their shared addresses): a
// stage fills with the producer's one arrival and the bytes of its copies,
// and frees with `readers` arrivals, one per consumer warpgroup that read
// it. A block-wide barrier of the caller's follows.
template <class Full, class Empty>
__device__ __forceinline__ void init_stage_barriers(int tid, int stages,
                                                    Full full, Empty empty,
                                                    unsigned readers) {
  if (tid != 0)
    return;
  for (int s = 0; s < stages; ++s) {
    barrier_init(full(s), 1);
    barrier_init(empty(s), readers);
  }
  barrier_init_fence();
}

// An arrival on the mbarrier at the same shared address in block `rank` of
// the cluster. It releases at the scope of the arriving block only (the
// default): it tells a peer's producer that this block's reads of a stage,
// which have completed, are done. A cluster-scope release would first wait
// for every earlier write of the thread, the epilogue's global stores among
// them, to reach the cluster.
__device__ __forceinline__ void arrive_in_block(unsigned bar, unsigned rank) {
  asm volatile("{\n"
               "  .reg .b32 remote;\n"
               "  mapa.shared::cluster.u32 remote, %0, %1;\n"
               "  mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
               "}\n" ::"r"(bar),
               "r"(rank)
               : "memory");
}

// A barrier among the `threads` threads (whole warps) that use `id` (1-15;
// 0 is __syncthreads').
__device__ __forceinline__ void named_barrier(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Arrives on named barrier `id` of `threads` without waiting: the threads
// that bar.sync there go on once these have arrived too.
__device__ __forceinline__ void named_arrive(unsigned id, unsigned threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Turns of two consumer warpgroups (0 and 1) that alternate at issuing
// their products: consumer c waits at barrier 1 + c (its 128 threads'
// bar.sync meeting the other's 128 arrivals) and passes the turn by
// arriving at the other's.
__device__ __forceinline__ void wait_turn(int consumer) {
  named_barrier(1 + consumer, 256);
}
__device__ __forceinline__ void pass_turn(int consumer) {
  named_arrive(2 - consumer, 256);
}

// Register reallocation between the warpgroups of a warp-specialised block:
// producers give registers back, consumers take them.
template <int REGS> __device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// Register shares of a warp-specialised block of one producer warpgroup
// and CONSUMERS consumer warpgroups, one block per SM: the producer keeps
// 24 (its one thread only copies) and the consumers share the rest, at most
// 240 each (ptxas allocates the code after each setmaxnreg for its count).
// A block of one consumer has as many as a thread can use without it.
template <int CONSUMERS> struct register_split {
  static constexpr int THREADS = 128 * (CONSUMERS + 1);
  static constexpr int LAUNCH = 65536 / THREADS / 8 * 8;
  static constexpr int PRODUCER = 24;
  static constexpr int SHARED =
      (LAUNCH * THREADS - 128 * PRODUCER) / (128 * CONSUMERS) / 8 * 8;
  static constexpr int CONSUMER = SHARED < 240 ? SHARED : 240;
  static constexpr bool REALLOCATE = LAUNCH < CONSUMER;
  static __device__ __forceinline__ void producer() {
    if constexpr (REALLOCATE)
      release_registers<PRODUCER>();
  }
  static __device__ __forceinline__ void consumer() {
    if constexpr (REALLOCATE)
      claim_registers<CONSUMER>();
  }
};

} // namespace tma
} // namespace kiln
