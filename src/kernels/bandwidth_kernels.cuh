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

}  // namespace gb10tune::kernels::detail
