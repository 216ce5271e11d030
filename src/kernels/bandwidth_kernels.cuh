// Device code of the bandwidth benchmark, parameterised so that tools/bwtune can time every
// variant; bandwidth.cu instantiates the chosen ones. Private to src/kernels and tools/bwtune.
//
// Buffers are viewed as `n_vec` 16-byte vectors (uint4) followed by `tail` < 16 bytes. The fill
// pattern is the little-endian image of 32-bit words, word i = (i + seed) mod 2^32, so the read
// checksum (sum of the words mod 2^64) has a closed form on the host (pattern_checksum).
#pragma once

#include <cstdint>

namespace gb10tune::kernels::detail {

// How the grid walks the vectors. grid_stride: a thread's kUnroll loads are one grid apart;
// block_tile: a block owns a contiguous tile of blockDim * kUnroll vectors per step, tiles
// dealt round-robin to blocks; block_chunk: the same tiles, but each block owns one contiguous
// run of them (1/gridDim of the buffer).
enum class Layout { grid_stride, block_tile, block_chunk };

// 16-byte global load flavours.
enum class Load {
  plain,      // ld.global.v4
  nc,         // __ldg: ld.global.nc (read-only path)
  cs,         // __ldcs: ld.global.cs (streaming, evict first)
  nc_na_256,  // ld.global.nc.L1::no_allocate.L2::256B (no L1 allocation, 256-byte L2 prefetch)
  nc_ef,      // ld.global.nc.L1::no_allocate.L2::cache_hint, L2 policy evict_first
  nc_el,      // ld.global.nc.L1::no_allocate.L2::cache_hint, L2 policy evict_last
};

// 16-byte global store flavours.
enum class Store {
  plain,  // st.global.v4
  cs,     // __stcs: st.global.cs (streaming)
  na,     // st.global.L1::no_allocate
  ef,     // st.global.L1::no_allocate.L2::cache_hint, L2 policy evict_first
};

// An L2 cache policy (createpolicy) for .L2::cache_hint accesses: all lines evict_first or all
// evict_last. The compiler hoists it out of loops.
enum class L2Evict { first, last };

template <L2Evict E>
__device__ __forceinline__ std::uint64_t l2_policy() {
  std::uint64_t policy;
  if constexpr (E == L2Evict::first) {
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  } else {
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  }
  return policy;
}

__device__ __forceinline__ uint4 load16_hinted(const uint4* p, std::uint64_t policy) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "l"(policy));
  return v;
}

template <Load L>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  if constexpr (L == Load::plain) {
    return *p;
  } else if constexpr (L == Load::nc) {
    return __ldg(p);
  } else if constexpr (L == Load::cs) {
    return __ldcs(p);
  } else if constexpr (L == Load::nc_na_256) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
  } else if constexpr (L == Load::nc_ef) {
    return load16_hinted(p, l2_policy<L2Evict::first>());
  } else {
    return load16_hinted(p, l2_policy<L2Evict::last>());
  }
}

template <Store S>
__device__ __forceinline__ void store16(uint4* p, uint4 v) {
  if constexpr (S == Store::plain) {
    *p = v;
  } else if constexpr (S == Store::cs) {
    __stcs(p, v);
  } else if constexpr (S == Store::na) {
    asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
                 "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  } else {
    asm volatile(
        "st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
        "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(l2_policy<L2Evict::first>())
        : "memory");
  }
}

// Sum of the four words of a vector, widened to 64 bits.
__device__ __forceinline__ std::uint64_t word_sum(uint4 v) {
  return static_cast<std::uint64_t>(v.x) + v.y + v.z + v.w;
}

// The pattern's vector number `i`: words 4i .. 4i+3 plus seed.
__device__ __forceinline__ uint4 pattern16(std::uint64_t i, std::uint32_t seed) {
  const std::uint32_t w = static_cast<std::uint32_t>(i * 4) + seed;
  return make_uint4(w, w + 1, w + 2, w + 3);
}

// Byte `offset` of the pattern.
__device__ __forceinline__ unsigned char pattern_byte(std::uint64_t offset, std::uint32_t seed) {
  const std::uint32_t word = static_cast<std::uint32_t>(offset / 4) + seed;
  return static_cast<unsigned char>(word >> (8 * (offset % 4)));
}

// Visits every vector index in [0, n_vec) exactly once across the grid: batch(idx) gets kUnroll
// independent indices at a time (so that kUnroll accesses are in flight per thread), then
// single(i) gets the few indices left over.
template <Layout Lay, int kUnroll, typename Batch, typename Single>
__device__ __forceinline__ void for_each_vector(std::uint64_t n_vec, Batch batch, Single single) {
  const std::uint64_t block = blockDim.x;
  std::uint64_t idx[kUnroll];
  if constexpr (Lay == Layout::grid_stride) {
    const std::uint64_t stride = block * gridDim.x;
    std::uint64_t i = blockIdx.x * block + threadIdx.x;
    for (; i + (kUnroll - 1) * stride < n_vec; i += kUnroll * stride) {
#pragma unroll
      for (int k = 0; k < kUnroll; ++k)
        idx[k] = i + k * stride;
      batch(idx);
    }
    for (; i < n_vec; i += stride)
      single(i);
  } else {
    const std::uint64_t tile = block * kUnroll;
    const std::uint64_t n_tiles = n_vec / tile;
    const bool chunked = Lay == Layout::block_chunk;
    const std::uint64_t first = chunked ? n_tiles * blockIdx.x / gridDim.x : blockIdx.x;
    const std::uint64_t last = chunked ? n_tiles * (blockIdx.x + 1) / gridDim.x : n_tiles;
    const std::uint64_t step = chunked ? 1 : gridDim.x;
    for (std::uint64_t t = first; t < last; t += step) {
      const std::uint64_t base = t * tile + threadIdx.x;
#pragma unroll
      for (int k = 0; k < kUnroll; ++k)
        idx[k] = base + k * block;
      batch(idx);
    }
    const std::uint64_t stride = block * gridDim.x;
    for (std::uint64_t i = n_tiles * tile + blockIdx.x * block + threadIdx.x; i < n_vec;
         i += stride) {
      single(i);
    }
  }
}

// True for the one thread of the grid that handles the bytes after the last full vector.
__device__ __forceinline__ bool is_tail_thread() {
  return blockIdx.x == 0 && threadIdx.x == 0;
}

// Adds the block's sum of `value` to *out with one atomic per block. blockDim.x must be a
// multiple of 32 and at most 1024.
__device__ __forceinline__ void block_sum_to(unsigned long long* out, std::uint64_t value) {
  __shared__ unsigned long long warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  if (lane == 0)
    warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    const unsigned n_warps = blockDim.x / 32;
    value = lane < n_warps ? warp_sums[lane] : 0;
    for (int offset = 16; offset > 0; offset /= 2) {
      value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    if (lane == 0)
      atomicAdd(out, static_cast<unsigned long long>(value));
  }
}

// read: adds the checksum of the buffer (n_vec vectors + tail bytes) to *out (zeroed first).
template <Layout Lay, int kUnroll, Load L>
__global__ void read_kernel(const uint4* __restrict__ src, std::uint64_t n_vec, unsigned tail,
                            unsigned long long* __restrict__ out) {
  std::uint64_t acc = 0;
  for_each_vector<Lay, kUnroll>(
      n_vec,
      [&](const std::uint64_t(&idx)[kUnroll]) {
        uint4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
          v[k] = load16<L>(src + idx[k]);
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
          acc += word_sum(v[k]);
      },
      [&](std::uint64_t i) { acc += word_sum(load16<L>(src + i)); });
  if (tail != 0 && is_tail_thread()) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(src + n_vec);
    for (unsigned j = 0; j < tail; ++j)
      acc += static_cast<std::uint64_t>(bytes[j]) << (8 * (j % 4));
  }
  block_sum_to(out, acc);
}

// write: stores the pattern with `seed` over the whole buffer.
template <Layout Lay, int kUnroll, Store S>
__global__ void write_kernel(uint4* __restrict__ dst, std::uint64_t n_vec, unsigned tail,
                             std::uint32_t seed) {
  for_each_vector<Lay, kUnroll>(
      n_vec,
      [&](const std::uint64_t(&idx)[kUnroll]) {
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
          store16<S>(dst + idx[k], pattern16(idx[k], seed));
      },
      [&](std::uint64_t i) { store16<S>(dst + i, pattern16(i, seed)); });
  if (tail != 0 && is_tail_thread()) {
    auto* bytes = reinterpret_cast<unsigned char*>(dst + n_vec);
    for (unsigned j = 0; j < tail; ++j)
      bytes[j] = pattern_byte(n_vec * 16 + j, seed);
  }
}

// copy: dst = src over n_vec vectors + tail bytes; all kUnroll loads issue before the stores.
template <Layout Lay, int kUnroll, Load L, Store S>
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                            std::uint64_t n_vec, unsigned tail) {
  for_each_vector<Lay, kUnroll>(
      n_vec,
      [&](const std::uint64_t(&idx)[kUnroll]) {
        uint4 v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
          v[k] = load16<L>(src + idx[k]);
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
          store16<S>(dst + idx[k], v[k]);
      },
      [&](std::uint64_t i) { store16<S>(dst + i, load16<L>(src + i)); });
  if (tail != 0 && is_tail_thread()) {
    const auto* from = reinterpret_cast<const unsigned char*>(src + n_vec);
    auto* to = reinterpret_cast<unsigned char*>(dst + n_vec);
    for (unsigned j = 0; j < tail; ++j)
      to[j] = from[j];
  }
}

// ---- Bulk copy in lockstep (sm_90 and later) ----------------------------------------------
// One warp per block, one thread of it driving the SM's bulk-copy unit (TMA): chunks of kChunk
// bytes go global -> shared (cp.async.bulk, completion on an mbarrier) -> global (bulk group),
// over kStages shared buffers, loads running kAhead chunks ahead of the stores; source loads
// carry an L2 evict_last policy, stores evict_first. Block b copies chunks b, b + grid, ...
// (its k-th chunk is in "round" k). Lockstep: a block issues round k's load only once the whole
// grid has issued round k - kLag, which keeps the grid on one narrow window of the buffer instead
// of drifting apart (measured: +4% over the same pipeline without it, docs/bandwidth-kernels.md).
// The lockstep only orders work, never decides it: a wait that lasts longer than
// kLockstepTimeoutCycles (blocks that are not resident, a shared GPU) drops the block out of
// lockstep, and the copy stays correct. Needs kStages * kChunk bytes of dynamic shared memory;
// addresses and sizes are 16-byte aligned (vectors); what follows the last whole chunk, tail
// bytes included, is copied by every thread.

inline constexpr int kBulkRing = 16;        // round counters, reused round-robin (> kLag)
inline constexpr int kBulkSlotStride = 32;  // u64 per counter: 256 bytes, one L2 line each
inline constexpr long long kLockstepTimeoutCycles = 2000000;  // ~1 ms at 2 GHz

// Device-side state of the lockstep: zero before the first launch; the last block of every
// launch sets it back to zero, so launches on one stream can reuse it.
struct BulkCopySync {
  unsigned long long rounds[kBulkRing * kBulkSlotStride];
  unsigned long long finished_blocks;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Waits until *counter >= want; false when that took more than kLockstepTimeoutCycles SM
// clock cycles (the clock is read every 64 polls).
__device__ __forceinline__ bool wait_for_count(const unsigned long long* counter,
                                               unsigned long long want) {
  const auto* c = reinterpret_cast<const volatile unsigned long long*>(counter);
  if (*c >= want)
    return true;
  const long long start = clock64();
  for (unsigned polls = 1; *c < want; ++polls) {
    if (polls % 64 == 0 && clock64() - start > kLockstepTimeoutCycles)
      return false;
    __nanosleep(32);
  }
  return true;
}

// Global -> shared bulk load of `bytes` completing on `bar`, with L2 policy `policy`.
__device__ __forceinline__ void bulk_load(void* smem, const void* gmem, std::uint32_t bytes,
                                          std::uint64_t* bar, std::uint64_t policy) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
      "[%0], [%1], %2, [%3], %4;" ::"r"(shared_address(smem)),
      "l"(gmem), "r"(bytes), "r"(shared_address(bar)), "l"(policy)
      : "memory");
}

// Waits for the phase with `parity` of the mbarrier `bar`.
__device__ __forceinline__ void bulk_wait(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  } while (done == 0);
}

// Shared -> global bulk store of `bytes` as one committed bulk group, with L2 policy `policy`.
__device__ __forceinline__ void bulk_store(void* gmem, const void* smem, std::uint32_t bytes,
                                           std::uint64_t policy) {
  asm volatile(
      "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(gmem),
      "r"(shared_address(smem)), "r"(bytes), "l"(policy)
      : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until at most N committed store groups still read shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
#endif

// The bulk pipeline of thread 0 of a block over its n_chunks chunks (see above).
template <int kChunk, int kStages, int kAhead, int kLag>
__device__ __forceinline__ void bulk_copy_chunks(const unsigned char* from, unsigned char* to,
                                                 std::uint64_t n_chunks, BulkCopySync* sync,
                                                 unsigned char* stages, std::uint64_t* full) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  for (int s = 0; s < kStages; ++s) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&full[s]))
                 : "memory");
  }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const std::uint64_t load_policy = l2_policy<L2Evict::last>();
  const std::uint64_t store_policy = l2_policy<L2Evict::first>();
  const std::uint64_t b = blockIdx.x;
  const std::uint64_t g = gridDim.x;
  const std::uint64_t count = n_chunks > b ? (n_chunks - b + g - 1) / g : 0;
  bool lockstep = true;
  for (std::uint64_t k = 0; k < count + kAhead; ++k) {
    if (k < count) {  // load round k into stage k % kStages once its previous store read it
      const int s = static_cast<int>(k % kStages);
      if (k >= kStages)
        bulk_wait_read<kStages - kAhead - 1>();
      if (lockstep && k >= kLag) {  // round k - kLag is whole: this block has a later chunk
        const std::uint64_t done = k - kLag;
        lockstep = wait_for_count(&sync->rounds[(done % kBulkRing) * kBulkSlotStride],
                                  g * (done / kBulkRing + 1));
      }
      bulk_load(stages + s * kChunk, from + (b + k * g) * kChunk, kChunk, &full[s], load_policy);
      atomicAdd(&sync->rounds[(k % kBulkRing) * kBulkSlotStride], 1ull);
    }
    if (k >= kAhead) {  // store round j = k - kAhead once its load landed
      const std::uint64_t j = k - kAhead;
      const int s = static_cast<int>(j % kStages);
      bulk_wait(&full[s], static_cast<std::uint32_t>((j / kStages) & 1));
      bulk_store(to + (b + j * g) * kChunk, stages + s * kChunk, kChunk, store_policy);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

// copy on sm_90 and later: dst = src over n_vec vectors + tail bytes; launch with 32 threads per
// block, at most one block per resident slot, kStages * kChunk bytes of dynamic shared memory.
// Compiled for an older target it only copies through the 16-byte loop (the host never picks it
// there: copy_path.hpp).
template <int kChunk, int kStages, int kAhead, int kLag>
__global__ void bulk_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                 std::uint64_t n_vec, unsigned tail, BulkCopySync* sync) {
  static_assert(kChunk % 16 == 0 && kAhead >= 1 && kAhead < kStages);
  static_assert(kLag >= 1 && kLag < kBulkRing);
  std::uint64_t n_chunks = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) std::uint64_t full[kStages];
  n_chunks = n_vec * 16 / kChunk;
  if (threadIdx.x == 0) {
    bulk_copy_chunks<kChunk, kStages, kAhead, kLag>(reinterpret_cast<const unsigned char*>(src),
                                                    reinterpret_cast<unsigned char*>(dst), n_chunks,
                                                    sync, stages, full);
  }
#endif
  const std::uint64_t stride = std::uint64_t(blockDim.x) * gridDim.x;
  for (std::uint64_t i = n_chunks * (kChunk / 16) + blockIdx.x * blockDim.x + threadIdx.x;
       i < n_vec; i += stride) {
    dst[i] = src[i];
  }
  if (tail != 0 && is_tail_thread()) {
    const auto* from = reinterpret_cast<const unsigned char*>(src + n_vec);
    auto* to = reinterpret_cast<unsigned char*>(dst + n_vec);
    for (unsigned j = 0; j < tail; ++j)
      to[j] = from[j];
  }
  // The last block out resets the lockstep state for the next launch.
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&sync->finished_blocks, 1ull) == gridDim.x - 1) {
      for (int i = 0; i < kBulkRing * kBulkSlotStride; i += kBulkSlotStride)
        sync->rounds[i] = 0;
      sync->finished_blocks = 0;
      __threadfence();
    }
  }
}

}  // namespace gb10tune::kernels::detail
