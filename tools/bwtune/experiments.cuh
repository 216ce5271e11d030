// DEV TOOL: copy-kernel experiments that did not (yet) earn a place in
// src/kernels/bandwidth_kernels.cuh: L2 cache-policy hints on the copy's loads and stores, for the
// 16-byte copy and for the bulk (TMA) copy. Built for sm_90 only, by tools/bwtune/build.sh.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "../../src/kernels/bandwidth_kernels.cuh"

namespace bwtune {

using gb10tune::kernels::detail::is_tail_thread;

// ---- Bulk (TMA) copy, sm_90 and later ---------------------------------------------------
// One thread per block drives the Hopper bulk-copy engine: global -> shared (cp.async.bulk,
// completion on an mbarrier) then shared -> global (cp.async.bulk bulk_group), kStages shared
// buffers of kChunk bytes, loads running kAhead chunks ahead of stores. Chunks are dealt
// round-robin to blocks; whatever follows the last whole chunk goes through 16-byte accesses.
// Needs kStages * kChunk bytes of dynamic shared memory.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GB10TUNE_HAVE_BULK_COPY 1
#else
#define GB10TUNE_HAVE_BULK_COPY 0
#endif

#if GB10TUNE_HAVE_BULK_COPY
// The helpers that the shipped bulk copy (bandwidth_kernels.cuh) shares with the experiments.
using gb10tune::kernels::detail::bulk_wait;
using gb10tune::kernels::detail::bulk_wait_read;
using gb10tune::kernels::detail::shared_address;

__device__ __forceinline__ void bulk_barrier_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
}

__device__ __forceinline__ void bulk_load(void* smem, const void* gmem, std::uint32_t bytes,
                                          std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(shared_address(smem)),
      "l"(gmem), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}

__device__ __forceinline__ void bulk_store(void* gmem, const void* smem, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem),
               "r"(shared_address(smem)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
#endif

template <int kChunk, int kStages, int kAhead>
__global__ void copy_bulk_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                 std::uint64_t n_vec, unsigned tail) {
  static_assert(kChunk % 16 == 0 && kAhead >= 0 && kAhead < kStages);
  std::uint64_t n_chunks = 0;
#if GB10TUNE_HAVE_BULK_COPY
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  n_chunks = n_vec * 16 / kChunk;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      bulk_barrier_init(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    auto* to = reinterpret_cast<unsigned char*>(dst);
    const std::uint64_t mine =
        n_chunks > blockIdx.x ? (n_chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    for (std::uint64_t k = 0; k < mine + kAhead; ++k) {
      if (k < mine) {  // load chunk k into stage k % kStages once its last store has read it
        const int s = static_cast<int>(k % kStages);
        if (k >= kStages)
          bulk_wait_read<kStages - kAhead - 1>();
        const std::uint64_t c = blockIdx.x + k * gridDim.x;
        bulk_load(stages + s * kChunk, from + c * kChunk, kChunk, &full[s]);
      }
      if (k >= kAhead && k - kAhead < mine) {  // store chunk j = k - kAhead
        const std::uint64_t j = k - kAhead;
        const int s = static_cast<int>(j % kStages);
        bulk_wait(&full[s], static_cast<std::uint32_t>((j / kStages) & 1));
        bulk_store(to + (blockIdx.x + j * gridDim.x) * kChunk, stages + s * kChunk, kChunk);
      }
    }
    bulk_wait_all();
  }
#endif
  const std::uint64_t stride = std::uint64_t(blockDim.x) * gridDim.x;
  for (std::uint64_t i = n_chunks * kChunk / 16 + blockIdx.x * blockDim.x + threadIdx.x; i < n_vec;
       i += stride) {
    dst[i] = src[i];
  }
  if (tail != 0 && is_tail_thread()) {
    const auto* from = reinterpret_cast<const unsigned char*>(src + n_vec);
    auto* to = reinterpret_cast<unsigned char*>(dst + n_vec);
    for (unsigned j = 0; j < tail; ++j)
      to[j] = from[j];
  }
}

// L2 policies (createpolicy.fractional): primary priority for `fraction` of the lines, the
// secondary one (evict_unchanged unless named) for the rest.
enum class Pol { first, last, normal, unchanged, last_half_first, first_half, none };

template <Pol P>
__device__ __forceinline__ std::uint64_t policy() {
  std::uint64_t p;
  if constexpr (P == Pol::first) {
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  } else if constexpr (P == Pol::last) {
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  } else if constexpr (P == Pol::normal) {
    asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
  } else if constexpr (P == Pol::unchanged) {
    asm("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(p));
  } else if constexpr (P == Pol::last_half_first) {
    asm("createpolicy.fractional.L2::evict_last.L2::evict_first.b64 %0, 0.5;" : "=l"(p));
  } else if constexpr (P == Pol::first_half) {
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 0.5;" : "=l"(p));
  } else {
    p = 0;  // Pol::none: callers issue the access without .L2::cache_hint
  }
  return p;
}

// How the copy stores: with an L2 policy hint, or one of the plain flavours.
enum class St { hint, plain, cs, wt };

template <St S, Pol P>
__device__ __forceinline__ void store(uint4* p, uint4 v) {
  if constexpr (S == St::hint) {
    asm volatile(
        "st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
        "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy<P>())
        : "memory");
  } else if constexpr (S == St::plain) {
    *p = v;
  } else if constexpr (S == St::cs) {
    __stcs(p, v);
  } else {
    __stwt(p, v);
  }
}

// Leftover vectors after `first` and the tail bytes, 16 bytes at a time.
__device__ __forceinline__ void copy_rest(const uint4* src, uint4* dst, std::uint64_t first,
                                          std::uint64_t n_vec, unsigned tail) {
  const std::uint64_t stride = std::uint64_t(blockDim.x) * gridDim.x;
  for (std::uint64_t i = first + blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
    dst[i] = src[i];
  }
  if (tail != 0 && is_tail_thread()) {
    const auto* from = reinterpret_cast<const unsigned char*>(src + n_vec);
    auto* to = reinterpret_cast<unsigned char*>(dst + n_vec);
    for (unsigned j = 0; j < tail; ++j)
      to[j] = from[j];
  }
}

// block_tile copy with L2 policy LP on the loads and (S, SP) on the stores.
template <int U, Pol LP, St S, Pol SP>
__global__ void copy_policy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                   std::uint64_t n_vec, unsigned tail) {
  namespace d = gb10tune::kernels::detail;
  const std::uint64_t tile = std::uint64_t(blockDim.x) * U;
  const std::uint64_t n_tiles = n_vec / tile;
  for (std::uint64_t t = blockIdx.x; t < n_tiles; t += gridDim.x) {
    const std::uint64_t base = t * tile + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k)
      v[k] = d::load16_hinted(src + base + k * blockDim.x, policy<LP>());
#pragma unroll
    for (int k = 0; k < U; ++k)
      store<S, SP>(dst + base + k * blockDim.x, v[k]);
  }
  copy_rest(src, dst, n_tiles * tile, n_vec, tail);
}

// The bulk (TMA) copy of bandwidth_kernels.cuh with L2 hints: loads LP, stores SP.
template <int kChunk, int kStages, int kAhead, Pol LP, Pol SP>
__global__ void copy_bulk_hinted_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                        std::uint64_t n_vec, unsigned tail) {
#if GB10TUNE_HAVE_BULK_COPY
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  const std::uint64_t n_chunks = n_vec * 16 / kChunk;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      bulk_barrier_init(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    auto* to = reinterpret_cast<unsigned char*>(dst);
    const std::uint64_t load_policy = policy<LP>();
    const std::uint64_t store_policy = policy<SP>();
    const std::uint64_t mine =
        n_chunks > blockIdx.x ? (n_chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    for (std::uint64_t k = 0; k < mine + kAhead; ++k) {
      if (k < mine) {
        const int s = static_cast<int>(k % kStages);
        if (k >= kStages)
          bulk_wait_read<kStages - kAhead - 1>();
        const std::uint64_t c = blockIdx.x + k * gridDim.x;
        const std::uint32_t bar = shared_address(&full[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                     "r"(kChunk)
                     : "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
            "[%0], [%1], %2, [%3], %4;" ::"r"(shared_address(stages + s * kChunk)),
            "l"(from + c * kChunk), "r"(kChunk), "r"(bar), "l"(load_policy)
            : "memory");
      }
      if (k >= kAhead) {
        const std::uint64_t j = k - kAhead;
        const int s = static_cast<int>(j % kStages);
        bulk_wait(&full[s], static_cast<std::uint32_t>((j / kStages) & 1));
        asm volatile(
            "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(
                to + (blockIdx.x + j * gridDim.x) * kChunk),
            "r"(shared_address(stages + s * kChunk)), "r"(kChunk), "l"(store_policy)
            : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      }
    }
    bulk_wait_all();
  }
  copy_rest(src, dst, n_chunks * kChunk / 16, n_vec, tail);
#endif
}

// The block_tile copy with loads evict_last / stores evict_first, plus an L2 prefetch
// (prefetch.global.L2::evict_last, one 128-byte line per thread) kAhead tiles ahead. U == 8.
template <int kAhead>
__global__ void copy_prefetch_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                     std::uint64_t n_vec, unsigned tail) {
  namespace d = gb10tune::kernels::detail;
  constexpr int U = 8;  // blockDim * 8 vectors = blockDim lines of 128 bytes per tile
  const std::uint64_t tile = std::uint64_t(blockDim.x) * U;
  const std::uint64_t n_tiles = n_vec / tile;
  for (std::uint64_t t = blockIdx.x; t < n_tiles; t += gridDim.x) {
    const std::uint64_t ahead = t + kAhead * std::uint64_t(gridDim.x);
    if (ahead < n_tiles) {
      asm volatile(
          "prefetch.global.L2::evict_last [%0];" ::"l"(src + ahead * tile + threadIdx.x * U));
    }
    const std::uint64_t base = t * tile + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k)
      v[k] = d::load16<d::Load::nc_el>(src + base + k * blockDim.x);
#pragma unroll
    for (int k = 0; k < U; ++k)
      d::store16<d::Store::ef>(dst + base + k * blockDim.x, v[k]);
  }
  copy_rest(src, dst, n_tiles * tile, n_vec, tail);
}

// The block_tile copy with loads evict_last and a 256-byte L2 prefetch size, stores evict_first.
template <int U>
__global__ void copy_el256_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                  std::uint64_t n_vec, unsigned tail) {
  namespace d = gb10tune::kernels::detail;
  const std::uint64_t policy = d::l2_policy<d::L2Evict::last>();
  const std::uint64_t tile = std::uint64_t(blockDim.x) * U;
  const std::uint64_t n_tiles = n_vec / tile;
  for (std::uint64_t t = blockIdx.x; t < n_tiles; t += gridDim.x) {
    const std::uint64_t base = t * tile + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      asm("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
          : "=r"(v[k].x), "=r"(v[k].y), "=r"(v[k].z), "=r"(v[k].w)
          : "l"(src + base + k * blockDim.x), "l"(policy));
    }
#pragma unroll
    for (int k = 0; k < U; ++k)
      d::store16<d::Store::ef>(dst + base + k * blockDim.x, v[k]);
  }
  copy_rest(src, dst, n_tiles * tile, n_vec, tail);
}

// ---- Bulk (TMA) copy study of 2026-11-29 (second attempt) -------------------------------
// Which chunks a block copies: round_robin deals chunk c to block c % gridDim (the grid sweeps
// one window of the buffer); region gives each block one contiguous run of n_chunks / gridDim
// chunks (each block streams its own sequential region).
enum class Order { round_robin, region };

// The chunks of this block: first, first + step, ... (count of them).
struct ChunkRange {
  std::uint64_t first;
  std::uint64_t count;
  std::uint64_t step;
};

// This block's chunks among n_chunks, in order O.
template <Order O>
__device__ __forceinline__ ChunkRange chunk_range(std::uint64_t n_chunks) {
  const std::uint64_t b = blockIdx.x;
  const std::uint64_t g = gridDim.x;
  if constexpr (O == Order::region) {
    const std::uint64_t first = n_chunks * b / g;
    return {first, n_chunks * (b + 1) / g - first, 1};
  } else {
    return {b, n_chunks > b ? (n_chunks - b + g - 1) / g : 0, g};
  }
}

#if GB10TUNE_HAVE_BULK_COPY
// Bulk load global -> shared completing on `bar` (expect_tx armed here), L2 policy LP.
template <Pol LP>
__device__ __forceinline__ void tma_load(void* smem, const void* gmem, std::uint32_t bytes,
                                         std::uint64_t* bar, std::uint64_t pol) {
  const std::uint32_t b = shared_address(bar);
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes)
               : "memory");
  if constexpr (LP == Pol::none) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
        "[%3];" ::"r"(shared_address(smem)),
        "l"(gmem), "r"(bytes), "r"(b)
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
        "[%0], [%1], %2, [%3], %4;" ::"r"(shared_address(smem)),
        "l"(gmem), "r"(bytes), "r"(b), "l"(pol)
        : "memory");
  }
}

// Bulk store shared -> global as one committed bulk group, L2 policy SP.
template <Pol SP>
__device__ __forceinline__ void tma_store(void* gmem, const void* smem, std::uint32_t bytes,
                                          std::uint64_t pol) {
  if constexpr (SP == Pol::none) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem),
                 "r"(shared_address(smem)), "r"(bytes)
                 : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(
            gmem),
        "r"(shared_address(smem)), "r"(bytes), "l"(pol)
        : "memory");
  }
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Initialises kStages mbarriers (arrival count 1) and makes them visible to the async proxy.
template <int kStages>
__device__ __forceinline__ void tma_init(std::uint64_t* full) {
  for (int s = 0; s < kStages; ++s)
    bulk_barrier_init(&full[s]);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
#endif

// Pipelined bulk copy: thread 0 keeps kAhead loads and up to kStages - kAhead stores in flight
// over kStages shared buffers of kChunk bytes; chunk order O; L2 policies LP (loads), SP
// (stores). Needs kStages * kChunk bytes of dynamic shared memory.
// kPrefetch > 0 also asks the L2 (cp.async.bulk.prefetch.L2, evict_last) for the chunk
// kPrefetch chunks ahead of each load.
// kSplit > 1 issues each chunk's load and store as kSplit bulk copies of kChunk / kSplit bytes
// (one barrier, one store group per chunk).
template <int kChunk, int kStages, int kAhead, Order O, Pol LP, Pol SP, int kPrefetch = 0,
          int kSplit = 1>
__global__ void copy_tma_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                std::uint64_t n_vec, unsigned tail) {
  static_assert(kChunk % (16 * kSplit) == 0 && kAhead >= 1 && kAhead < kStages);
  constexpr int kPart = kChunk / kSplit;
  std::uint64_t n_chunks = 0;
#if GB10TUNE_HAVE_BULK_COPY
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  n_chunks = n_vec * 16 / kChunk;
  if (threadIdx.x == 0) {
    tma_init<kStages>(full);
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    auto* to = reinterpret_cast<unsigned char*>(dst);
    const std::uint64_t lp = policy<LP>();
    const std::uint64_t sp = policy<SP>();
    const ChunkRange r = chunk_range<O>(n_chunks);
    for (std::uint64_t k = 0; k < r.count + kAhead; ++k) {
      if (k < r.count) {  // load chunk k into stage k % kStages once its last store has read it
        const int s = static_cast<int>(k % kStages);
        if (k >= kStages)
          bulk_wait_read<kStages - kAhead - 1>();
        const unsigned char* chunk = from + (r.first + k * r.step) * kChunk;
        if constexpr (kSplit == 1) {
          tma_load<LP>(stages + s * kChunk, chunk, kChunk, &full[s], lp);
        } else {
          const std::uint32_t bar = shared_address(&full[s]);
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                       "r"(kChunk)
                       : "memory");
          for (int i = 0; i < kSplit; ++i) {
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                ".L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
                    shared_address(stages + s * kChunk + i * kPart)),
                "l"(chunk + i * kPart), "r"(kPart), "r"(bar), "l"(lp)
                : "memory");
          }
        }
        if (kPrefetch > 0 && k + kPrefetch < r.count) {
          asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(
                           from + (r.first + (k + kPrefetch) * r.step) * kChunk),
                       "r"(kChunk), "l"(policy<Pol::last>())
                       : "memory");
        }
      }
      if (k >= kAhead) {  // store chunk j = k - kAhead
        const std::uint64_t j = k - kAhead;
        const int s = static_cast<int>(j % kStages);
        bulk_wait(&full[s], static_cast<std::uint32_t>((j / kStages) & 1));
        if constexpr (kSplit == 1) {
          tma_store<SP>(to + (r.first + j * r.step) * kChunk, stages + s * kChunk, kChunk, sp);
        } else {
          for (int i = 0; i < kSplit; ++i) {
            asm volatile(
                "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, "
                "%3;" ::"l"(to + (r.first + j * r.step) * kChunk + i * kPart),
                "r"(shared_address(stages + s * kChunk + i * kPart)), "r"(kPart), "l"(sp)
                : "memory");
          }
          asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
      }
    }
    bulk_wait_all();
  }
#endif
  copy_rest(src, dst, n_chunks * kChunk / 16, n_vec, tail);
}

// Phased bulk copy: thread 0 loads kStages chunks (a read phase), stores each as it lands, then
// waits until every store has read shared memory before the next read phase. Batches the
// block's reads and writes instead of interleaving them chunk by chunk.
template <int kChunk, int kStages, Order O, Pol LP, Pol SP>
__global__ void copy_tma_batch_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                      std::uint64_t n_vec, unsigned tail) {
  static_assert(kChunk % 16 == 0 && kStages >= 1);
  std::uint64_t n_chunks = 0;
#if GB10TUNE_HAVE_BULK_COPY
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  n_chunks = n_vec * 16 / kChunk;
  if (threadIdx.x == 0) {
    tma_init<kStages>(full);
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    auto* to = reinterpret_cast<unsigned char*>(dst);
    const std::uint64_t lp = policy<LP>();
    const std::uint64_t sp = policy<SP>();
    const ChunkRange r = chunk_range<O>(n_chunks);
    std::uint32_t parity = 0;
    for (std::uint64_t base = 0; base < r.count; base += kStages, parity ^= 1) {
      const int n = static_cast<int>(r.count - base < kStages ? r.count - base : kStages);
      for (int s = 0; s < n; ++s) {
        tma_load<LP>(stages + s * kChunk, from + (r.first + (base + s) * r.step) * kChunk, kChunk,
                     &full[s], lp);
      }
      for (int s = 0; s < n; ++s) {
        bulk_wait(&full[s], parity);
        tma_store<SP>(to + (r.first + (base + s) * r.step) * kChunk, stages + s * kChunk, kChunk,
                      sp);
      }
      bulk_wait_read<0>();
    }
    bulk_wait_all();
  }
#endif
  copy_rest(src, dst, n_chunks * kChunk / 16, n_vec, tail);
}

// Tensor (cp.async.bulk.tensor.2d) copy: the chunks of the buffer seen as rows of 2048 bytes
// (256 x u64), kRows rows a chunk, dealt round-robin; the host's tensor maps choose the L2
// promotion (sector fill size) of the loads. Otherwise as copy_tma_kernel. Both maps cover
// n_chunks * kRows rows; whatever follows goes through copy_rest.
template <int kRows, int kStages, int kAhead, Pol LP, Pol SP>
__global__ void copy_tensor_kernel(const __grid_constant__ CUtensorMap src_map,
                                   const __grid_constant__ CUtensorMap dst_map,
                                   const uint4* __restrict__ src, uint4* __restrict__ dst,
                                   std::uint64_t n_vec, unsigned tail) {
  constexpr int kChunk = kRows * 2048;
  std::uint64_t n_chunks = 0;
#if GB10TUNE_HAVE_BULK_COPY
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  n_chunks = n_vec * 16 / kChunk;
  if (threadIdx.x == 0) {
    tma_init<kStages>(full);
    const std::uint64_t lp = policy<LP>();
    const std::uint64_t sp = policy<SP>();
    const auto smap = reinterpret_cast<std::uint64_t>(&src_map);
    const auto dmap = reinterpret_cast<std::uint64_t>(&dst_map);
    const ChunkRange r = chunk_range<Order::round_robin>(n_chunks);
    for (std::uint64_t k = 0; k < r.count + kAhead; ++k) {
      if (k < r.count) {
        const int s = static_cast<int>(k % kStages);
        if (k >= kStages)
          bulk_wait_read<kStages - kAhead - 1>();
        const std::uint32_t bar = shared_address(&full[s]);
        const int row = static_cast<int>((r.first + k * r.step) * kRows);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                     "r"(kChunk)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(
                shared_address(stages + s * kChunk)),
            "l"(smap), "r"(0), "r"(row), "r"(bar), "l"(lp)
            : "memory");
      }
      if (k >= kAhead) {
        const std::uint64_t j = k - kAhead;
        const int s = static_cast<int>(j % kStages);
        bulk_wait(&full[s], static_cast<std::uint32_t>((j / kStages) & 1));
        const int row = static_cast<int>((r.first + j * r.step) * kRows);
        asm volatile(
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint"
            " [%0, {%1, %2}], [%3], %4;" ::"l"(dmap),
            "r"(0), "r"(row), "r"(shared_address(stages + s * kChunk)), "l"(sp)
            : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      }
    }
    bulk_wait_all();
  }
#endif
  copy_rest(src, dst, n_chunks * kChunk / 16, n_vec, tail);
}

// ---- Third copy attempt (2026-11-29): orders, lockstep and source demotion ------------------
// Like copy_tma_kernel (one warp per block; lane 0 drives the bulk copies), plus:
// - kGroups > 1: the grid is split into kGroups groups and the buffer into kGroups contiguous
//   regions; each group deals its region's chunks round-robin (a few streams, as several copy
//   engines would run);
// - kReverse: chunks in descending address order;
// - kLockstep = D > 0: a block issues the load of chunk c only after chunks 0 .. c - D * gridDim
//   were issued by the whole grid (a global counter, zeroed before each launch), so the grid's
//   window stays D rounds wide instead of drifting apart;
// - kDemote: once a chunk is stored, its source lines are set back to L2 evict_normal, so the
//   evict_last lines never pile up in the L2.
template <int kChunk, int kStages, int kAhead, int kGroups, bool kReverse, int kLockstep,
          bool kDemote>
__global__ void copy_tma4_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                 std::uint64_t n_vec, unsigned tail, unsigned long long* progress) {
  static_assert(kChunk % 16 == 0 && kAhead >= 1 && kAhead < kStages && kGroups >= 1);
  std::uint64_t n_chunks = 0;
#if GB10TUNE_HAVE_BULK_COPY
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  n_chunks = n_vec * 16 / kChunk;
  const unsigned lane = threadIdx.x;
  if (threadIdx.x < 32) {
    if (lane == 0)
      tma_init<kStages>(full);
    __syncwarp();
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    auto* to = reinterpret_cast<unsigned char*>(dst);
    const std::uint64_t lp = policy<Pol::last>();
    const std::uint64_t sp = policy<Pol::first>();
    // This block's chunks: group g_id of kGroups, index i among the group's blocks.
    const std::uint64_t per_group = gridDim.x / kGroups;
    const std::uint64_t g_id = blockIdx.x / per_group;
    const std::uint64_t i = blockIdx.x % per_group;
    const std::uint64_t lo = n_chunks * g_id / kGroups;
    const std::uint64_t len = g_id < kGroups ? n_chunks * (g_id + 1) / kGroups - lo : 0;
    const std::uint64_t count = len > i ? (len - i + per_group - 1) / per_group : 0;
    auto chunk_of = [&](std::uint64_t k) {
      const std::uint64_t c = lo + i + k * per_group;
      return kReverse ? n_chunks - 1 - c : c;
    };
    for (std::uint64_t k = 0; k < count + kAhead; ++k) {
      if (k < count && lane == 0) {
        const int s = static_cast<int>(k % kStages);
        if (k >= kStages)
          bulk_wait_read<kStages - kAhead - 1>();
        if constexpr (kLockstep > 0) {
          const std::uint64_t c = lo + i + k * per_group;  // position in issue order
          const std::uint64_t lag = std::uint64_t(kLockstep) * gridDim.x;
          if (c >= lag) {
            while (*reinterpret_cast<volatile unsigned long long*>(progress) < c - lag + 1)
              __nanosleep(64);
          }
        }
        tma_load<Pol::last>(stages + s * kChunk, from + chunk_of(k) * kChunk, kChunk, &full[s], lp);
        if constexpr (kLockstep > 0)
          atomicAdd(progress, 1ull);
      }
      if (k >= kAhead) {
        const std::uint64_t j = k - kAhead;
        const int s = static_cast<int>(j % kStages);
        bulk_wait(&full[s], static_cast<std::uint32_t>((j / kStages) & 1));
        if (lane == 0)
          tma_store<Pol::first>(to + chunk_of(j) * kChunk, stages + s * kChunk, kChunk, sp);
        if constexpr (kDemote) {
          const unsigned char* done = from + chunk_of(j) * kChunk;
          for (int off = int(lane) * 128; off < kChunk; off += 32 * 128)
            asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(done + off)
                         : "memory");
        }
      }
      __syncwarp();
    }
    if (lane == 0)
      bulk_wait_all();
  }
#endif
  copy_rest(src, dst, n_chunks * kChunk / 16, n_vec, tail);
}

// Lockstep without one hot counter: a ring of kRing round counters, each in its own 256-byte
// line (so that the atomics of consecutive rounds go to different L2 slices). Block b copies
// chunks b, b + grid, ... (round k = its k-th chunk); it issues round k's load only once every
// block has issued round k - kLag, i.e. once the counter of that round reached the grid size.
// A round waited for is always complete (the block's own later chunk exists), and a ring slot
// is reused only after its previous round was complete (kRing > kLag), so slot r % kRing holds
// grid * (r / kRing + 1) when round r is done. The ring must be zero before each launch.
constexpr int kRing = 16;
constexpr int kRingStride = 32;  // u64 per slot: 256 bytes
__device__ unsigned long long g_round_ring[kRing * kRingStride];

template <int kChunk, int kStages, int kAhead, int kLag>
__global__ void copy_tma5_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                 std::uint64_t n_vec, unsigned tail) {
  static_assert(kChunk % 16 == 0 && kAhead >= 1 && kAhead < kStages && kLag >= 1 && kLag < kRing);
  std::uint64_t n_chunks = 0;
#if GB10TUNE_HAVE_BULK_COPY
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  n_chunks = n_vec * 16 / kChunk;
  if (threadIdx.x == 0) {
    tma_init<kStages>(full);
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    auto* to = reinterpret_cast<unsigned char*>(dst);
    const std::uint64_t lp = policy<Pol::last>();
    const std::uint64_t sp = policy<Pol::first>();
    const ChunkRange r = chunk_range<Order::round_robin>(n_chunks);
    for (std::uint64_t k = 0; k < r.count + kAhead; ++k) {
      if (k < r.count) {
        const int s = static_cast<int>(k % kStages);
        if (k >= kStages)
          bulk_wait_read<kStages - kAhead - 1>();
        if (k >= kLag) {
          const std::uint64_t done = k - kLag;
          const unsigned long long want = gridDim.x * (done / kRing + 1);
          const auto* slot = reinterpret_cast<volatile unsigned long long*>(
              &g_round_ring[(done % kRing) * kRingStride]);
          while (*slot < want)
            __nanosleep(32);
        }
        tma_load<Pol::last>(stages + s * kChunk, from + (r.first + k * r.step) * kChunk, kChunk,
                            &full[s], lp);
        atomicAdd(&g_round_ring[(k % kRing) * kRingStride], 1ull);
      }
      if (k >= kAhead) {
        const std::uint64_t j = k - kAhead;
        const int s = static_cast<int>(j % kStages);
        bulk_wait(&full[s], static_cast<std::uint32_t>((j / kStages) & 1));
        tma_store<Pol::first>(to + (r.first + j * r.step) * kChunk, stages + s * kChunk, kChunk,
                              sp);
      }
    }
    bulk_wait_all();
  }
#endif
  copy_rest(src, dst, n_chunks * kChunk / 16, n_vec, tail);
}

}  // namespace bwtune
