// DEV TOOL, not part of gb10tune: times every kernel variant of src/kernels/bandwidth_kernels.cuh
// on one GPU so that bandwidth.cu can pick the best, and prints run_case's figures for every
// allocator x operation. See tools/bwtune/README.md.
//
//   bwtune sweep [GiB [prefix]]   variants (ids starting with prefix) x block sizes x blocks/SM
//   bwtune cases [MiB [allocator]]   run_case for every allocator (or one) x operation
//   bwtune study [prefix]   copy layouts (persistent grids, TMA pipelines) vs cudaMemcpyAsync
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "../../src/kernels/bandwidth_kernels.cuh"
#include "experiments.cuh"
#include "gb10tune/kernels/bandwidth.hpp"

namespace {

using namespace gb10tune::kernels;
using detail::Layout;
using detail::Load;
using detail::Store;

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess)
    return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
  std::exit(1);
}

const char* name(Layout l) {
  switch (l) {
    case Layout::grid_stride:
      return "grid_stride";
    case Layout::block_tile:
      return "block_tile";
    case Layout::block_chunk:
      return "block_chunk";
  }
  return "?";
}
const char* name(Load l) {
  switch (l) {
    case Load::plain:
      return "plain";
    case Load::nc:
      return "nc";
    case Load::cs:
      return "cs";
    case Load::nc_na_256:
      return "nc_na_256";
    case Load::nc_ef:
      return "nc_ef";
    case Load::nc_el:
      return "nc_el";
  }
  return "?";
}
const char* name(Store s) {
  switch (s) {
    case Store::plain:
      return "plain";
    case Store::cs:
      return "cs";
    case Store::na:
      return "na";
    case Store::ef:
      return "ef";
  }
  return "?";
}

struct Buffers {
  uint4* a = nullptr;
  uint4* b = nullptr;
  unsigned long long* sum = nullptr;
  std::uint64_t bytes = 0;
};

// A kernel variant: its id, its occupancy query and a launcher.
struct Variant {
  std::string op;
  std::string id;
  std::function<int(int block)> max_per_sm;
  std::function<void(int grid, int block, const Buffers&)> launch;
  std::vector<int> blocks = {128, 256, 512, 1024};
};

template <typename K>
int occupancy(K kernel, int block, int smem = 0) {
  int n = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, smem), "occupancy");
  return n;
}

template <Layout Lay, int U, Load L>
void add_read(std::vector<Variant>& out) {
  auto k = detail::read_kernel<Lay, U, L>;
  out.push_back({"read",
                 std::string("read/") + name(Lay) + "/u" + std::to_string(U) + "/" + name(L),
                 [k](int b) { return occupancy(k, b); },
                 [k](int g, int b, const Buffers& buf) {
                   k<<<g, b>>>(buf.a, buf.bytes / 16, unsigned(buf.bytes % 16), buf.sum);
                 }});
}

template <Layout Lay, int U, Store S>
void add_write(std::vector<Variant>& out) {
  auto k = detail::write_kernel<Lay, U, S>;
  out.push_back({"write",
                 std::string("write/") + name(Lay) + "/u" + std::to_string(U) + "/" + name(S),
                 [k](int b) { return occupancy(k, b); },
                 [k](int g, int b, const Buffers& buf) {
                   k<<<g, b>>>(buf.b, buf.bytes / 16, unsigned(buf.bytes % 16), 12345u);
                 }});
}

template <Layout Lay, int U, Load L, Store S>
void add_copy(std::vector<Variant>& out) {
  auto k = detail::copy_kernel<Lay, U, L, S>;
  out.push_back(
      {"copy",
       std::string("copy/") + name(Lay) + "/u" + std::to_string(U) + "/" + name(L) + "/" + name(S),
       [k](int b) { return occupancy(k, b); },
       [k](int g, int b, const Buffers& buf) {
         k<<<g, b>>>(buf.a, buf.b, buf.bytes / 16, unsigned(buf.bytes % 16));
       }});
}

template <Layout Lay, int U>
void add_unroll(std::vector<Variant>& v) {
  add_read<Lay, U, Load::plain>(v);
  add_read<Lay, U, Load::nc>(v);
  add_read<Lay, U, Load::cs>(v);
  add_read<Lay, U, Load::nc_na_256>(v);
  add_read<Lay, U, Load::nc_ef>(v);
  add_write<Lay, U, Store::plain>(v);
  add_write<Lay, U, Store::cs>(v);
  add_write<Lay, U, Store::na>(v);
  add_copy<Lay, U, Load::plain, Store::plain>(v);
  add_copy<Lay, U, Load::nc, Store::plain>(v);
  add_copy<Lay, U, Load::cs, Store::plain>(v);
  add_copy<Lay, U, Load::nc, Store::cs>(v);
  add_copy<Lay, U, Load::cs, Store::cs>(v);
  add_copy<Lay, U, Load::nc, Store::na>(v);
  add_copy<Lay, U, Load::nc_na_256, Store::plain>(v);
  add_copy<Lay, U, Load::nc_na_256, Store::cs>(v);
}

template <typename K>
Variant copy_variant(std::string id, K k, int smem = 0,
                     std::vector<int> blocks = {256, 512, 1024}) {
  if (smem > 0) {
    check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem");
  }
  return {"copy", std::move(id), [k, smem](int b) { return occupancy(k, b, smem); },
          [k, smem](int g, int b, const Buffers& buf) {
            k<<<g, b, smem>>>(buf.a, buf.b, buf.bytes / 16, unsigned(buf.bytes % 16));
          },
          std::move(blocks)};
}

const char* name(bwtune::Pol p) {
  switch (p) {
    case bwtune::Pol::first:
      return "ef";
    case bwtune::Pol::last:
      return "el";
    case bwtune::Pol::normal:
      return "en";
    case bwtune::Pol::unchanged:
      return "eu";
    case bwtune::Pol::last_half_first:
      return "el50ef";
    case bwtune::Pol::first_half:
      return "ef50";
    case bwtune::Pol::none:
      return "nohint";
  }
  return "?";
}

template <int U, bwtune::Pol LP, bwtune::St S, bwtune::Pol SP>
void add_policy(std::vector<Variant>& v) {
  using bwtune::St;
  const std::string store = S == St::hint ? name(SP) : (S == St::plain ? "plain" : "cs");
  v.push_back(copy_variant("copy/policy/u" + std::to_string(U) + "/" + name(LP) + "/" + store,
                           bwtune::copy_policy_kernel<U, LP, S, SP>));
}

template <int U>
void add_policies(std::vector<Variant>& v) {
  using bwtune::Pol;
  using bwtune::St;
  add_policy<U, Pol::last, St::hint, Pol::first>(v);
  add_policy<U, Pol::last, St::plain, Pol::first>(v);
  add_policy<U, Pol::last, St::cs, Pol::first>(v);
  add_policy<U, Pol::last, St::hint, Pol::normal>(v);
  add_policy<U, Pol::last, St::hint, Pol::unchanged>(v);
  add_policy<U, Pol::last, St::hint, Pol::first_half>(v);
  add_policy<U, Pol::normal, St::hint, Pol::first>(v);
  add_policy<U, Pol::unchanged, St::hint, Pol::first>(v);
  add_policy<U, Pol::first, St::hint, Pol::first>(v);
  add_policy<U, Pol::last_half_first, St::hint, Pol::first>(v);
}

template <int kChunk, int kStages, int kAhead>
void add_bulk(std::vector<Variant>& v) {
  using bwtune::Pol;
  const std::string shape = std::to_string(kChunk / 1024) + "K/s" + std::to_string(kStages) + "/a" +
                            std::to_string(kAhead);
  v.push_back(copy_variant("copy/bulk/" + shape, bwtune::copy_bulk_kernel<kChunk, kStages, kAhead>,
                           kChunk * kStages, {32}));
  v.push_back(
      copy_variant("copy/bulk/" + shape + "/el/ef",
                   bwtune::copy_bulk_hinted_kernel<kChunk, kStages, kAhead, Pol::last, Pol::first>,
                   kChunk * kStages, {32}));
}

std::vector<Variant> all_variants() {
  std::vector<Variant> v;
  add_policies<4>(v);
  add_policies<8>(v);
  add_policies<16>(v);
  add_bulk<16384, 4, 2>(v);
  add_bulk<32768, 3, 1>(v);
  add_bulk<32768, 4, 2>(v);
  add_bulk<65536, 3, 1>(v);
  v.push_back(
      copy_variant("copy/prefetch/a1/el/ef", bwtune::copy_prefetch_kernel<1>, 0, {512, 1024}));
  v.push_back(
      copy_variant("copy/prefetch/a2/el/ef", bwtune::copy_prefetch_kernel<2>, 0, {512, 1024}));
  v.push_back(
      copy_variant("copy/prefetch/a4/el/ef", bwtune::copy_prefetch_kernel<4>, 0, {512, 1024}));
  v.push_back(copy_variant("copy/el256/u8/ef", bwtune::copy_el256_kernel<8>, 0, {512, 1024}));
  v.push_back(copy_variant("copy/el256/u16/ef", bwtune::copy_el256_kernel<16>, 0, {512, 1024}));
  add_read<Layout::block_tile, 8, Load::nc_el>(v);
  add_write<Layout::block_tile, 8, Store::ef>(v);
  add_write<Layout::block_tile, 4, Store::ef>(v);
  add_copy<Layout::block_tile, 8, Load::nc_el, Store::ef>(v);
  add_copy<Layout::block_tile, 16, Load::nc_el, Store::ef>(v);
  add_copy<Layout::block_tile, 4, Load::nc_el, Store::ef>(v);
  add_read<Layout::block_chunk, 8, Load::nc>(v);
  add_read<Layout::block_chunk, 8, Load::plain>(v);
  add_read<Layout::block_tile, 16, Load::nc>(v);
  add_read<Layout::block_tile, 16, Load::plain>(v);
  add_read<Layout::block_chunk, 16, Load::nc>(v);
  add_write<Layout::block_chunk, 8, Store::cs>(v);
  add_write<Layout::block_chunk, 8, Store::plain>(v);
  add_write<Layout::block_tile, 16, Store::cs>(v);
  add_copy<Layout::block_chunk, 8, Load::nc, Store::plain>(v);
  add_copy<Layout::block_chunk, 8, Load::plain, Store::plain>(v);
  add_copy<Layout::block_chunk, 8, Load::cs, Store::cs>(v);
  add_copy<Layout::block_tile, 16, Load::nc, Store::plain>(v);
  add_copy<Layout::block_tile, 16, Load::cs, Store::cs>(v);
  add_copy<Layout::block_chunk, 16, Load::nc, Store::plain>(v);
  add_unroll<Layout::grid_stride, 1>(v);
  add_unroll<Layout::grid_stride, 2>(v);
  add_unroll<Layout::grid_stride, 4>(v);
  add_unroll<Layout::grid_stride, 8>(v);
  add_unroll<Layout::block_tile, 2>(v);
  add_unroll<Layout::block_tile, 4>(v);
  add_unroll<Layout::block_tile, 8>(v);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median GB/s of `samples` timed launches after `warmup` untimed ones.
double time_gbps(const std::function<void()>& launch, double traffic, int warmup, int samples) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> gbps;
  for (int r = 0; r < warmup + samples; ++r) {
    check(cudaEventRecord(start), "record");
    launch();
    check(cudaGetLastError(), "launch");
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    if (r >= warmup)
      gbps.push_back(traffic / (ms * 1e-3) / 1e9);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(gbps);
}

struct Config {
  const Variant* variant;
  int block;
  int per_sm;
  double gbps = 0;
  std::vector<double> rounds;
};

std::string label(const Config& c) {
  return c.variant->id + " b" + std::to_string(c.block) + " x" + std::to_string(c.per_sm) + "/SM";
}

int sweep(double gib, const std::string& only) {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attr");
  Buffers buf;
  // Not a multiple of 16 (nor of any bulk chunk): the leftover and tail paths run too.
  buf.bytes = static_cast<std::uint64_t>(gib * (1ull << 30)) + 4099;
  check(cudaMalloc(&buf.a, buf.bytes), "cudaMalloc a");
  check(cudaMalloc(&buf.b, buf.bytes), "cudaMalloc b");
  check(cudaMalloc(&buf.sum, 8), "cudaMalloc sum");
  // Source pattern (seed 7) via a write kernel; the read checksum is then checked per variant.
  detail::write_kernel<Layout::grid_stride, 4, Store::plain>
      <<<sms * 4, 512>>>(buf.a, buf.bytes / 16, unsigned(buf.bytes % 16), 7u);
  check(cudaDeviceSynchronize(), "fill");
  const std::uint64_t want = pattern_checksum(buf.bytes, 7u);

  const std::vector<Variant> variants = all_variants();
  std::vector<Config> configs;
  for (const Variant& v : variants) {
    if (v.id.rfind(only, 0) != 0)
      continue;  // only ids starting with `only`
    for (int block : v.blocks) {
      const int max = v.max_per_sm(block);
      for (int per_sm : {max, max / 2}) {
        if (per_sm < 1 || (per_sm == max / 2 && max / 2 == max))
          continue;
        configs.push_back({&v, block, per_sm});
      }
    }
  }
  std::printf("# sweep: %zu configs, %.2f GiB buffers, %d SMs\n", configs.size(), gib, sms);
  // Checksum of a buffer by a fixed read kernel (for validating write and copy variants).
  auto checksum_of = [&](const uint4* p) {
    check(cudaMemset(buf.sum, 0, 8), "memset");
    detail::read_kernel<Layout::grid_stride, 4, Load::plain>
        <<<sms * 3, 512>>>(p, buf.bytes / 16, unsigned(buf.bytes % 16), buf.sum);
    unsigned long long got = 0;
    check(cudaMemcpy(&got, buf.sum, 8, cudaMemcpyDeviceToHost), "checksum");
    return std::uint64_t{got};
  };
  int mismatches = 0;
  for (Config& c : configs) {
    const std::string& op = c.variant->op;
    const double traffic = (op == "copy" ? 2.0 : 1.0) * double(buf.bytes);
    const int grid = c.per_sm * sms;
    if (op != "read")
      check(cudaMemset(buf.b, 0xa5, buf.bytes), "poison");
    c.gbps = time_gbps(
        [&] {
          if (op == "read")
            check(cudaMemsetAsync(buf.sum, 0, 8), "memset");
          c.variant->launch(grid, c.block, buf);
        },
        traffic, 2, 15);
    std::uint64_t got = 0;
    std::uint64_t expected = 0;
    if (op == "read") {
      unsigned long long sum = 0;
      check(cudaMemcpy(&sum, buf.sum, 8, cudaMemcpyDeviceToHost), "checksum");
      got = sum;
      expected = want;
    } else {
      got = checksum_of(buf.b);
      expected = op == "copy" ? want : pattern_checksum(buf.bytes, 12345u);
    }
    const bool ok = got == expected;
    mismatches += ok ? 0 : 1;
    std::printf("%-48s %8.1f GB/s%s\n", label(c).c_str(), c.gbps, ok ? "" : "  CHECKSUM MISMATCH");
  }
  std::printf("# checksum mismatches: %d\n", mismatches);
  // memcpy reference
  const double memcpy_gbps = time_gbps(
      [&] { check(cudaMemcpyAsync(buf.b, buf.a, buf.bytes, cudaMemcpyDeviceToDevice), "memcpy"); },
      2.0 * double(buf.bytes), 2, 30);
  std::printf("%-48s %8.1f GB/s\n", "cudaMemcpyAsync d2d", memcpy_gbps);

  // Confirmation: the best 6 of each operation plus the simple baselines, interleaved rounds.
  std::vector<Config*> finalists;
  for (const char* op : {"read", "write", "copy"}) {
    std::vector<Config*> of_op;
    for (Config& c : configs) {
      if (c.variant->op == op)
        of_op.push_back(&c);
    }
    std::sort(of_op.begin(), of_op.end(), [](auto* x, auto* y) { return x->gbps > y->gbps; });
    for (std::size_t i = 0; i < of_op.size() && i < 6; ++i)
      finalists.push_back(of_op[i]);
    for (const bool bulk : {true, false}) {  // the best of each copy family
      for (Config* c : of_op) {
        if ((c->variant->id.find("/bulk/") != std::string::npos) != bulk)
          continue;
        if (std::find(finalists.begin(), finalists.end(), c) == finalists.end()) {
          finalists.push_back(c);
        }
        break;
      }
    }
    for (Config* c : of_op) {  // baselines: u1 plain at 256 threads, full occupancy
      const bool simple = c->variant->id.find("grid_stride/u1/plain") != std::string::npos &&
                          c->block == 256 && c->per_sm == c->variant->max_per_sm(256);
      const bool copy_simple = c->variant->id == "copy/grid_stride/u1/plain/plain";
      if (simple && (c->variant->op != "copy" || copy_simple) &&
          std::find(finalists.begin(), finalists.end(), c) == finalists.end()) {
        finalists.push_back(c);
      }
    }
  }
  std::vector<double> memcpy_rounds;
  for (int round = 0; round < 5; ++round) {
    for (Config* c : finalists) {
      const double traffic = (c->variant->op == "copy" ? 2.0 : 1.0) * double(buf.bytes);
      const int grid = c->per_sm * sms;
      c->rounds.push_back(time_gbps(
          [&] {
            if (c->variant->op == "read")
              check(cudaMemsetAsync(buf.sum, 0, 8), "memset");
            c->variant->launch(grid, c->block, buf);
          },
          traffic, 2, 30));
    }
    memcpy_rounds.push_back(time_gbps(
        [&] {
          check(cudaMemcpyAsync(buf.b, buf.a, buf.bytes, cudaMemcpyDeviceToDevice), "memcpy");
        },
        2.0 * double(buf.bytes), 2, 30));
  }
  std::printf(
      "\n# confirmation: 5 interleaved rounds x 30 samples; median of round medians "
      "[min..max]\n");
  for (Config* c : finalists) {
    auto [lo, hi] = std::minmax_element(c->rounds.begin(), c->rounds.end());
    std::printf("%-48s %8.1f GB/s [%.1f..%.1f]\n", label(*c).c_str(), median(c->rounds), *lo, *hi);
  }
  auto [lo, hi] = std::minmax_element(memcpy_rounds.begin(), memcpy_rounds.end());
  std::printf("%-48s %8.1f GB/s [%.1f..%.1f]\n", "cudaMemcpyAsync d2d", median(memcpy_rounds), *lo,
              *hi);
  cudaFree(buf.a);
  cudaFree(buf.b);
  cudaFree(buf.sum);
  return 0;
}

int cases(double mib, const std::string& only) {
  const auto bytes = static_cast<std::uint64_t>(mib * (1 << 20));
  std::printf("# run_case, %.0f MiB buffers, 3 warm-ups, 10 samples\n", mib);
  std::printf("%-18s %-11s %-9s %10s %10s  %s\n", "allocator", "operation", "status", "GB/s med",
              "GB/s best", "kernel / grid x block / validation or reason");
  int failures = 0;
  for (Allocator a : kAllAllocators) {
    if (!only.empty() && to_string(a) != only)
      continue;
    for (Operation op : kAllOperations) {
      CaseSpec spec;
      spec.allocator = a;
      spec.operation = op;
      spec.bytes = bytes;
      const CaseResult r = run_case(spec);
      double med = 0, best = 0;
      if (!r.sample_seconds.empty()) {
        med = double(r.traffic_bytes_per_sample) / median(r.sample_seconds) / 1e9;
        best = double(r.traffic_bytes_per_sample) /
               *std::min_element(r.sample_seconds.begin(), r.sample_seconds.end()) / 1e9;
      }
      std::printf("%-18s %-11s %-9s %10.1f %10.1f  %s %dx%d / %s\n",
                  std::string(to_string(a)).c_str(), std::string(to_string(op)).c_str(),
                  std::string(to_string(r.status)).c_str(), med, best, r.kernel.c_str(),
                  r.grid_blocks, r.block_threads,
                  (r.status == CaseStatus::ok ? r.validation : r.reason).c_str());
      if (r.status == CaseStatus::failed)
        ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

// ---- study: copy variants with a fixed grid, against cudaMemcpyAsync ------------------------

// A copy variant launched with exactly `grid` blocks of `block` threads.
struct Fixed {
  Variant v;
  int block;
  int grid;
  double screen[2] = {0, 0};  // median GB/s at the two sizes (large, small)
  std::vector<double> rounds[2];
};

// Short name of a chunk order.
const char* name(bwtune::Order o) {
  return o == bwtune::Order::region ? "region" : "rr";
}

// "<n>K" for a byte count.
std::string kib(int bytes) {
  return std::to_string(bytes / 1024) + "K";
}

// Pipelined TMA copy, `per_sm2` halves of blocks per SM (1 = 66 blocks on 132 SMs).
template <int kChunk, int kStages, int kAhead, bwtune::Order O, bwtune::Pol LP, bwtune::Pol SP>
void add_tma(std::vector<Fixed>& v, int sms, int per_sm2) {
  const std::string id = std::string("tma/") + name(O) + "/" + kib(kChunk) + "/s" +
                         std::to_string(kStages) + "/a" + std::to_string(kAhead) + "/" + name(LP) +
                         "/" + name(SP);
  v.push_back({copy_variant(id, bwtune::copy_tma_kernel<kChunk, kStages, kAhead, O, LP, SP>,
                            kChunk * kStages, {32}),
               32, sms * per_sm2 / 2});
}

// Phased TMA copy (read phase of kStages chunks, then their stores).
template <int kChunk, int kStages, bwtune::Order O, bwtune::Pol LP, bwtune::Pol SP>
void add_batch(std::vector<Fixed>& v, int sms, int per_sm2) {
  const std::string id = std::string("batch/") + name(O) + "/" + kib(kChunk) + "/s" +
                         std::to_string(kStages) + "/" + name(LP) + "/" + name(SP);
  v.push_back({copy_variant(id, bwtune::copy_tma_batch_kernel<kChunk, kStages, O, LP, SP>,
                            kChunk * kStages, {32}),
               32, sms * per_sm2 / 2});
}

// 16-byte copy kernel of bandwidth_kernels.cuh with a fixed grid.
template <Layout Lay, int U, Load L, Store S>
void add_vec(std::vector<Fixed>& v, int block, int grid) {
  std::vector<Variant> one;
  add_copy<Lay, U, L, S>(one);
  v.push_back({one[0], block, grid});
}

// A 2-D tensor map over `rows` rows of 2048 bytes at p (256 x u64), boxes of kRows rows.
CUtensorMap tensor_map(void* p, std::uint64_t rows, int box_rows, CUtensorMapL2promotion promo) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                           &q),
          "cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  CUtensorMap map;
  const cuuint64_t dims[2] = {256, rows};
  const cuuint64_t strides[1] = {2048};
  const cuuint32_t box[2] = {256, cuuint32_t(box_rows)};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT64, 2, p, dims, strides, box, elem,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, promo,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed: %d\n", int(r));
    std::exit(1);
  }
  return map;
}

// Short name of a tensor map's L2 promotion.
const char* name(CUtensorMapL2promotion p) {
  switch (p) {
    case CU_TENSOR_MAP_L2_PROMOTION_NONE:
      return "p0";
    case CU_TENSOR_MAP_L2_PROMOTION_L2_64B:
      return "p64";
    case CU_TENSOR_MAP_L2_PROMOTION_L2_128B:
      return "p128";
    default:
      return "p256";
  }
}

// Tensor-map TMA copy with L2 promotion `promo`; maps cached per (buffers, size).
template <int kRows, int kStages, int kAhead, bwtune::Pol LP, bwtune::Pol SP>
void add_tensor(std::vector<Fixed>& v, int sms, CUtensorMapL2promotion promo) {
  constexpr int kChunk = kRows * 2048;
  auto k = bwtune::copy_tensor_kernel<kRows, kStages, kAhead, LP, SP>;
  const int smem = kChunk * kStages;
  check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem");
  using Key = std::tuple<const void*, const void*, std::uint64_t>;
  auto cache = std::make_shared<std::map<Key, std::pair<CUtensorMap, CUtensorMap>>>();
  const std::string id = std::string("tensor/rr/") + kib(kChunk) + "/s" + std::to_string(kStages) +
                         "/a" + std::to_string(kAhead) + "/" + name(promo) + "/" + name(LP) + "/" +
                         name(SP);
  Variant var{"copy",
              id,
              [k, smem](int b) { return occupancy(k, b, smem); },
              [k, smem, cache, promo](int g, int b, const Buffers& buf) {
                const std::uint64_t rows = buf.bytes / kChunk * kRows;
                const Key key{buf.a, buf.b, buf.bytes};
                auto it = cache->find(key);
                if (it == cache->end()) {
                  it = cache
                           ->emplace(key, std::make_pair(tensor_map(buf.a, rows, kRows, promo),
                                                         tensor_map(buf.b, rows, kRows, promo)))
                           .first;
                }
                k<<<g, b, smem>>>(it->second.first, it->second.second, buf.a, buf.b, buf.bytes / 16,
                                  unsigned(buf.bytes % 16));
              },
              {32}};
  v.push_back({var, 32, sms});
}

// Block-tile 16-byte copy with load policy LP and store (S, SP), fixed grid.
template <int U, bwtune::Pol LP, bwtune::St S, bwtune::Pol SP>
void add_pol(std::vector<Fixed>& v, int block, int grid, const char* tag) {
  v.push_back(
      {copy_variant(std::string("policy/u") + std::to_string(U) + "/" + name(LP) + "/" + tag,
                    bwtune::copy_policy_kernel<U, LP, S, SP>),
       block, grid});
}

// Second study (call 2): L2 promotion, bulk L2 prefetch, policy fractions, write-through.
std::vector<Fixed> study2_variants(int sms) {
  using bwtune::Order;
  using bwtune::Pol;
  constexpr Order RR = Order::round_robin;
  constexpr Pol el = Pol::last, ef = Pol::first, no = Pol::none;
  std::vector<Fixed> v;
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_tma<65536, 3, 2, RR, el, ef>(v, sms, 2);
  add_tma<65536, 3, 1, RR, el, ef>(v, sms, 2);
  add_tma<98304, 2, 1, RR, el, ef>(v, sms, 2);
  add_tma<49152, 4, 2, RR, el, ef>(v, sms, 2);
  add_tma<49152, 4, 3, RR, el, ef>(v, sms, 2);
  add_tma<32768, 6, 4, RR, el, ef>(v, sms, 2);
  add_tma<32768, 6, 5, RR, el, ef>(v, sms, 2);
  add_tma<65536, 3, 2, RR, el, no>(v, sms, 2);
  add_tma<65536, 3, 2, RR, el, Pol::normal>(v, sms, 2);
  add_tma<65536, 3, 2, RR, el, Pol::unchanged>(v, sms, 2);
  add_tma<65536, 3, 2, RR, Pol::last_half_first, ef>(v, sms, 2);
  add_tma<65536, 3, 2, RR, el, el>(v, sms, 2);
  // Bulk L2 prefetch (evict_last) 2, 4, 8 chunks ahead.
  v.push_back({copy_variant("tma/rr/32K/s6/a3/el/ef/pf2",
                            bwtune::copy_tma_kernel<32768, 6, 3, RR, el, ef, 2>, 32768 * 6, {32}),
               32, sms});
  v.push_back({copy_variant("tma/rr/32K/s6/a3/el/ef/pf6",
                            bwtune::copy_tma_kernel<32768, 6, 3, RR, el, ef, 6>, 32768 * 6, {32}),
               32, sms});
  v.push_back({copy_variant("tma/rr/64K/s3/a2/el/ef/pf3",
                            bwtune::copy_tma_kernel<65536, 3, 2, RR, el, ef, 3>, 65536 * 3, {32}),
               32, sms});
  v.push_back({copy_variant("tma/rr/16K/s12/a6/el/ef/pf8",
                            bwtune::copy_tma_kernel<16384, 12, 6, RR, el, ef, 8>, 16384 * 12, {32}),
               32, sms});
  // Tensor maps: L2 promotion of the loads.
  for (auto promo : {CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B}) {
    add_tensor<32, 3, 2, el, ef>(v, sms, promo);
    add_tensor<16, 6, 3, el, ef>(v, sms, promo);
  }
  add_tensor<32, 3, 2, no, no>(v, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  // 16-byte copies: write-through stores, fractional evict_last loads.
  add_pol<8, el, bwtune::St::wt, ef>(v, 1024, 2 * sms, "wt");
  add_pol<8, Pol::normal, bwtune::St::wt, ef>(v, 1024, 2 * sms, "wt");
  add_pol<8, el, bwtune::St::hint, ef>(v, 1024, 2 * sms, "ef");
  add_pol<8, Pol::last_half_first, bwtune::St::hint, ef>(v, 1024, 2 * sms, "ef");
  return v;
}

// Third study (call 3): chunk size around the best (96 KiB, 2 stages), split bulk operations,
// two blocks per SM, fewer blocks, tensor maps at 96 KiB, larger 16-byte tiles.
std::vector<Fixed> study3_variants(int sms) {
  using bwtune::Order;
  using bwtune::Pol;
  constexpr Order RR = Order::round_robin;
  constexpr Order R = Order::region;
  constexpr Pol el = Pol::last, ef = Pol::first, no = Pol::none;
  std::vector<Fixed> v;
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_tma<98304, 2, 1, RR, el, ef>(v, sms, 2);
  add_tma<114688, 2, 1, RR, el, ef>(v, sms, 2);
  add_tma<73728, 3, 1, RR, el, ef>(v, sms, 2);
  add_tma<73728, 3, 2, RR, el, ef>(v, sms, 2);
  add_tma<81920, 2, 1, RR, el, ef>(v, sms, 2);
  add_tma<98304, 2, 1, RR, el, no>(v, sms, 2);
  add_tma<98304, 2, 1, R, el, ef>(v, sms, 2);
  add_tma<49152, 2, 1, RR, el, ef>(v, sms, 4);
  add_tma<57344, 2, 1, RR, el, ef>(v, sms, 4);
  for (int grid : {120, 128}) {
    v.push_back({copy_variant("tma/rr/96K/s2/a1/el/ef",
                              bwtune::copy_tma_kernel<98304, 2, 1, RR, el, ef>, 98304 * 2, {32}),
                 32, grid * sms / 132});
  }
  v.push_back(
      {copy_variant("tma/rr/96K/s2/a1/el/ef/split6",
                    bwtune::copy_tma_kernel<98304, 2, 1, RR, el, ef, 0, 6>, 98304 * 2, {32}),
       32, sms});
  v.push_back(
      {copy_variant("tma/rr/96K/s2/a1/el/ef/split24",
                    bwtune::copy_tma_kernel<98304, 2, 1, RR, el, ef, 0, 24>, 98304 * 2, {32}),
       32, sms});
  v.push_back(
      {copy_variant("tma/rr/16K/s12/a6/el/ef/split1",
                    bwtune::copy_tma_kernel<16384, 12, 6, RR, el, ef, 0, 1>, 16384 * 12, {32}),
       32, sms});
  add_tensor<48, 2, 1, el, ef>(v, sms, CU_TENSOR_MAP_L2_PROMOTION_NONE);
  add_tensor<48, 2, 1, el, ef>(v, sms, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  add_vec<Layout::block_tile, 16, Load::nc_el, Store::ef>(v, 1024, sms);
  add_vec<Layout::block_tile, 16, Load::nc_el, Store::ef>(v, 512, 2 * sms);
  add_vec<Layout::block_tile, 16, Load::nc_el, Store::ef>(v, 256, 4 * sms);
  return v;
}

// Third-attempt bulk copy (copy_tma4_kernel): groups, reverse order, lockstep window, source
// demotion. One 32-thread block per SM; the lockstep counter (buf.sum) is zeroed before each
// launch, inside the timed region.
template <int kChunk, int kStages, int kAhead, int kGroups, bool kReverse, int kLockstep,
          bool kDemote>
void add_tma4(std::vector<Fixed>& v, int sms) {
  auto k = bwtune::copy_tma4_kernel<kChunk, kStages, kAhead, kGroups, kReverse, kLockstep, kDemote>;
  const int smem = kChunk * kStages;
  check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem");
  std::string id = std::string("t4/") + kib(kChunk) + "/s" + std::to_string(kStages) + "/a" +
                   std::to_string(kAhead) + "/g" + std::to_string(kGroups);
  if (kReverse)
    id += "/rev";
  if (kLockstep > 0)
    id += "/lock" + std::to_string(kLockstep);
  if (kDemote)
    id += "/demote";
  Variant var{"copy",
              id,
              [k, smem](int b) { return occupancy(k, b, smem); },
              [k, smem](int g, int b, const Buffers& buf) {
                if (kLockstep > 0)
                  check(cudaMemsetAsync(buf.sum, 0, 8), "memset");
                k<<<g, b, smem>>>(buf.a, buf.b, buf.bytes / 16, unsigned(buf.bytes % 16), buf.sum);
              },
              {32}};
  v.push_back({var, 32, sms});
}

// Fourth study (third attempt): a few streams instead of one window, descending order, a
// lockstep window, demoting copied source lines, smaller windows.
std::vector<Fixed> study4_variants(int sms) {
  using bwtune::Order;
  using bwtune::Pol;
  constexpr Order RR = Order::round_robin;
  constexpr Pol el = Pol::last, ef = Pol::first;
  std::vector<Fixed> v;
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_tma<98304, 2, 1, RR, el, ef>(v, sms, 2);
  add_tma4<98304, 2, 1, 1, false, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 2, false, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 3, false, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 4, false, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 6, false, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 12, false, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 33, false, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 1, true, 0, false>(v, sms);
  add_tma4<98304, 2, 1, 1, false, 1, false>(v, sms);
  add_tma4<98304, 2, 1, 1, false, 2, false>(v, sms);
  add_tma4<98304, 2, 1, 1, false, 4, false>(v, sms);
  add_tma4<98304, 2, 1, 1, false, 8, false>(v, sms);
  add_tma4<32768, 6, 3, 1, false, 2, false>(v, sms);
  add_tma4<32768, 6, 3, 1, false, 4, false>(v, sms);
  add_tma4<32768, 6, 3, 1, false, 8, false>(v, sms);
  add_tma4<98304, 2, 1, 1, false, 0, true>(v, sms);
  add_tma4<98304, 2, 1, 1, false, 2, true>(v, sms);
  add_tma4<65536, 3, 2, 1, false, 0, true>(v, sms);
  add_tma4<98304, 2, 1, 4, false, 2, false>(v, sms);
  add_tma4<32768, 2, 1, 1, false, 0, false>(v, sms);
  add_tma4<65536, 2, 1, 1, false, 0, false>(v, sms);
  add_tma4<16384, 4, 2, 1, false, 0, false>(v, sms);
  return v;
}

// Fifth study (third attempt, second call): the lockstep window, by chunk size, depth and
// window width (D rounds of the grid).
std::vector<Fixed> study5_variants(int sms) {
  using bwtune::Order;
  using bwtune::Pol;
  std::vector<Fixed> v;
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_tma<98304, 2, 1, Order::round_robin, Pol::last, Pol::first>(v, sms, 2);
  add_tma4<32768, 6, 3, 1, false, 1, false>(v, sms);
  add_tma4<32768, 6, 3, 1, false, 2, false>(v, sms);
  add_tma4<32768, 6, 3, 1, false, 3, false>(v, sms);
  add_tma4<32768, 6, 2, 1, false, 2, false>(v, sms);
  add_tma4<32768, 6, 4, 1, false, 2, false>(v, sms);
  add_tma4<32768, 4, 2, 1, false, 2, false>(v, sms);
  add_tma4<16384, 12, 6, 1, false, 2, false>(v, sms);
  add_tma4<16384, 12, 6, 1, false, 3, false>(v, sms);
  add_tma4<16384, 12, 6, 1, false, 4, false>(v, sms);
  add_tma4<16384, 12, 6, 1, false, 6, false>(v, sms);
  add_tma4<16384, 12, 8, 1, false, 4, false>(v, sms);
  add_tma4<16384, 8, 4, 1, false, 2, false>(v, sms);
  add_tma4<16384, 8, 4, 1, false, 4, false>(v, sms);
  add_tma4<8192, 24, 12, 1, false, 4, false>(v, sms);
  add_tma4<8192, 24, 12, 1, false, 8, false>(v, sms);
  add_tma4<8192, 16, 8, 1, false, 4, false>(v, sms);
  add_tma4<24576, 8, 4, 1, false, 2, false>(v, sms);
  add_tma4<24576, 8, 4, 1, false, 3, false>(v, sms);
  add_tma4<49152, 4, 2, 1, false, 1, false>(v, sms);
  add_tma4<49152, 4, 2, 1, false, 2, false>(v, sms);
  add_tma4<65536, 3, 2, 1, false, 1, false>(v, sms);
  add_tma4<65536, 3, 2, 1, false, 2, false>(v, sms);
  add_tma4<98304, 2, 1, 1, false, 1, false>(v, sms);
  return v;
}

// Ring-counter lockstep copy (copy_tma5_kernel), one 32-thread block per SM; the ring is
// zeroed before each launch, inside the timed region.
template <int kChunk, int kStages, int kAhead, int kLag>
void add_tma5(std::vector<Fixed>& v, int sms) {
  auto k = bwtune::copy_tma5_kernel<kChunk, kStages, kAhead, kLag>;
  const int smem = kChunk * kStages;
  check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem");
  void* ring = nullptr;
  check(cudaGetSymbolAddress(&ring, bwtune::g_round_ring), "ring");
  const std::string id = std::string("t5/") + kib(kChunk) + "/s" + std::to_string(kStages) + "/a" +
                         std::to_string(kAhead) + "/lag" + std::to_string(kLag);
  Variant var{"copy",
              id,
              [k, smem](int b) { return occupancy(k, b, smem); },
              [k, smem, ring](int g, int b, const Buffers& buf) {
                check(cudaMemsetAsync(ring, 0, sizeof(bwtune::g_round_ring)), "memset");
                k<<<g, b, smem>>>(buf.a, buf.b, buf.bytes / 16, unsigned(buf.bytes % 16));
              },
              {32}};
  v.push_back({var, 32, sms});
}

// Sixth study: ring-counter lockstep by chunk size, depth and lag.
std::vector<Fixed> study6_variants(int sms) {
  std::vector<Fixed> v;
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_tma4<32768, 6, 3, 1, false, 1, false>(v, sms);
  add_tma5<32768, 6, 3, 1>(v, sms);
  add_tma5<32768, 6, 2, 1>(v, sms);
  add_tma5<32768, 6, 4, 1>(v, sms);
  add_tma5<32768, 4, 2, 1>(v, sms);
  add_tma5<32768, 6, 3, 2>(v, sms);
  add_tma5<24576, 8, 4, 1>(v, sms);
  add_tma5<24576, 8, 4, 2>(v, sms);
  add_tma5<16384, 12, 6, 1>(v, sms);
  add_tma5<16384, 12, 6, 2>(v, sms);
  add_tma5<16384, 12, 6, 3>(v, sms);
  add_tma5<16384, 8, 4, 2>(v, sms);
  add_tma5<16384, 8, 3, 2>(v, sms);
  add_tma5<8192, 24, 12, 2>(v, sms);
  add_tma5<8192, 24, 12, 4>(v, sms);
  add_tma5<8192, 16, 8, 3>(v, sms);
  add_tma5<49152, 4, 2, 1>(v, sms);
  add_tma5<65536, 3, 2, 1>(v, sms);
  add_tma5<65536, 3, 1, 1>(v, sms);
  add_tma5<98304, 2, 1, 1>(v, sms);
  add_tma5<12288, 16, 8, 2>(v, sms);
  add_tma5<12288, 16, 8, 3>(v, sms);
  return v;
}

// The copy kernel of src/kernels (detail::bulk_copy_kernel) with another shape; its lockstep
// state is zeroed once (the kernel resets it after every launch).
template <int kChunk, int kStages, int kAhead, int kLag>
void add_bulk(std::vector<Fixed>& v, int sms) {
  auto k = detail::bulk_copy_kernel<kChunk, kStages, kAhead, kLag>;
  const int smem = kChunk * kStages;
  check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem");
  detail::BulkCopySync* sync = nullptr;
  check(cudaMalloc(&sync, sizeof *sync), "cudaMalloc sync");
  check(cudaMemset(sync, 0, sizeof *sync), "memset sync");
  const std::string id = std::string("bulk/") + kib(kChunk) + "/s" + std::to_string(kStages) +
                         "/a" + std::to_string(kAhead) + "/lag" + std::to_string(kLag);
  Variant var{"copy",
              id,
              [k, smem](int b) { return occupancy(k, b, smem); },
              [k, smem, sync](int g, int b, const Buffers& buf) {
                k<<<g, b, smem>>>(buf.a, buf.b, buf.bytes / 16, unsigned(buf.bytes % 16), sync);
              },
              {32}};
  v.push_back({var, 32, sms});
}

// Seventh study: the shipped lockstep kernel around its shape (chunk, depth, lag).
std::vector<Fixed> study7_variants(int sms) {
  std::vector<Fixed> v;
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_bulk<32768, 6, 3, 2>(v, sms);
  add_tma5<32768, 6, 3, 2>(v, sms);
  add_bulk<32768, 6, 3, 3>(v, sms);
  add_bulk<32768, 6, 2, 2>(v, sms);
  add_bulk<32768, 6, 4, 2>(v, sms);
  add_bulk<32768, 5, 2, 2>(v, sms);
  add_bulk<32768, 3, 1, 2>(v, sms);
  add_bulk<24576, 8, 4, 2>(v, sms);
  add_bulk<24576, 8, 4, 3>(v, sms);
  add_bulk<24576, 9, 4, 2>(v, sms);
  add_bulk<28672, 7, 3, 2>(v, sms);
  add_bulk<40960, 5, 2, 2>(v, sms);
  add_bulk<40960, 5, 3, 2>(v, sms);
  add_bulk<49152, 4, 2, 2>(v, sms);
  add_bulk<20480, 10, 5, 2>(v, sms);
  add_bulk<20480, 10, 5, 3>(v, sms);
  return v;
}

// Eighth study: the shipped kernel (clock64 timeout every 64 polls) against the ring-counter
// kernel of study 6, chunk sizes 32-48 KiB, and shapes for ~100 KiB of shared memory.
std::vector<Fixed> study8_variants(int sms) {
  std::vector<Fixed> v;
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_bulk<32768, 6, 3, 2>(v, sms);
  add_tma5<32768, 6, 3, 2>(v, sms);
  add_bulk<40960, 5, 2, 2>(v, sms);
  add_bulk<40960, 5, 3, 2>(v, sms);
  add_bulk<45056, 5, 2, 2>(v, sms);
  add_bulk<36864, 6, 3, 2>(v, sms);
  add_bulk<49152, 4, 2, 2>(v, sms);
  add_bulk<32768, 6, 3, 3>(v, sms);
  add_bulk<32768, 3, 1, 2>(v, sms);
  add_bulk<40960, 2, 1, 2>(v, sms);
  add_bulk<24576, 4, 2, 2>(v, sms);
  return v;
}

// First study (call 1): region vs round-robin TMA pipelines, grid sizes, batched phases,
// L2 policies, persistent-grid 16-byte copies.
std::vector<Fixed> study_variants(int sms) {
  using bwtune::Order;
  using bwtune::Pol;
  constexpr Order R = Order::region;
  constexpr Order RR = Order::round_robin;
  constexpr Pol el = Pol::last, ef = Pol::first, no = Pol::none;
  std::vector<Fixed> v;
  // Baselines: the kernel in src/kernels and the best TMA copy of the first attempt.
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_tma<32768, 4, 2, RR, el, ef>(v, sms, 2);
  // TMA, one contiguous region per block, one block per SM: chunk size x depth.
  add_tma<4096, 48, 24, R, el, ef>(v, sms, 2);
  add_tma<8192, 24, 12, R, el, ef>(v, sms, 2);
  add_tma<8192, 24, 16, R, el, ef>(v, sms, 2);
  add_tma<16384, 12, 4, R, el, ef>(v, sms, 2);
  add_tma<16384, 12, 6, R, el, ef>(v, sms, 2);
  add_tma<16384, 12, 8, R, el, ef>(v, sms, 2);
  add_tma<32768, 6, 2, R, el, ef>(v, sms, 2);
  add_tma<32768, 6, 3, R, el, ef>(v, sms, 2);
  add_tma<32768, 6, 4, R, el, ef>(v, sms, 2);
  add_tma<49152, 4, 2, R, el, ef>(v, sms, 2);
  add_tma<65536, 3, 1, R, el, ef>(v, sms, 2);
  add_tma<65536, 3, 2, R, el, ef>(v, sms, 2);
  // L2 policies on one shape.
  add_tma<32768, 6, 3, R, no, no>(v, sms, 2);
  add_tma<32768, 6, 3, R, el, no>(v, sms, 2);
  add_tma<32768, 6, 3, R, no, ef>(v, sms, 2);
  add_tma<32768, 6, 3, R, ef, ef>(v, sms, 2);
  add_tma<32768, 6, 3, R, el, el>(v, sms, 2);
  add_tma<32768, 6, 3, R, ef, no>(v, sms, 2);
  // Two blocks per SM, three per SM, one block per two SMs.
  add_tma<8192, 12, 6, R, el, ef>(v, sms, 4);
  add_tma<16384, 6, 3, R, el, ef>(v, sms, 4);
  add_tma<16384, 6, 4, R, el, ef>(v, sms, 4);
  add_tma<32768, 3, 1, R, el, ef>(v, sms, 4);
  add_tma<32768, 3, 2, R, el, ef>(v, sms, 4);
  add_tma<16384, 4, 2, R, el, ef>(v, sms, 6);
  add_tma<32768, 6, 3, R, el, ef>(v, sms, 1);
  add_tma<65536, 3, 2, R, el, ef>(v, sms, 1);
  // Round-robin chunks (the grid sweeps one window), deeper than the first attempt.
  add_tma<4096, 48, 24, RR, el, ef>(v, sms, 2);
  add_tma<8192, 24, 12, RR, el, ef>(v, sms, 2);
  add_tma<16384, 12, 6, RR, el, ef>(v, sms, 2);
  add_tma<32768, 6, 3, RR, el, ef>(v, sms, 2);
  add_tma<65536, 3, 2, RR, el, ef>(v, sms, 2);
  add_tma<16384, 6, 3, RR, el, ef>(v, sms, 4);
  add_tma<32768, 3, 2, RR, el, ef>(v, sms, 4);
  // Phased: a read phase of the whole shared memory, then the writes.
  add_batch<16384, 12, R, el, ef>(v, sms, 2);
  add_batch<32768, 6, R, el, ef>(v, sms, 2);
  add_batch<65536, 3, R, el, ef>(v, sms, 2);
  add_batch<98304, 2, R, el, ef>(v, sms, 2);
  add_batch<16384, 6, R, el, ef>(v, sms, 4);
  add_batch<32768, 3, R, el, ef>(v, sms, 4);
  add_batch<49152, 2, R, el, ef>(v, sms, 4);
  add_batch<32768, 6, RR, el, ef>(v, sms, 2);
  // 16-byte copies, one contiguous region per block (block_chunk), persistent grids.
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 1024, sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 512, sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 512, 2 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 512, 4 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 256, sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 256, 2 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::ef>(v, 256, 8 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc, Store::cs>(v, 1024, 2 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc, Store::cs>(v, 512, 4 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc, Store::cs>(v, 256, 8 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc, Store::cs>(v, 256, 2 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::cs>(v, 1024, 2 * sms);
  add_vec<Layout::block_chunk, 8, Load::nc_el, Store::cs>(v, 512, 2 * sms);
  add_vec<Layout::block_chunk, 16, Load::nc_el, Store::ef>(v, 512, 2 * sms);
  add_vec<Layout::block_chunk, 16, Load::nc_el, Store::ef>(v, 256, 2 * sms);
  add_vec<Layout::block_chunk, 4, Load::nc_el, Store::ef>(v, 1024, 2 * sms);
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::cs>(v, 1024, 2 * sms);
  add_vec<Layout::block_tile, 8, Load::nc_el, Store::ef>(v, 512, 4 * sms);
  return v;
}

// Variant id with its block and grid.
std::string label(const Fixed& f) {
  return f.v.id + " b" + std::to_string(f.block) + " g" + std::to_string(f.grid);
}

// Median over `rounds` interleaved rounds of 30 launches per finalist and cudaMemcpyAsync, at
// `bytes`; prints median of round medians [min..max].
void confirm(std::vector<Fixed*>& finalists, Buffers buf, int slot, int rounds) {
  std::vector<double> memcpy_rounds;
  for (int round = 0; round < rounds; ++round) {
    for (Fixed* f : finalists) {
      f->rounds[slot].push_back(
          time_gbps([&] { f->v.launch(f->grid, f->block, buf); }, 2.0 * double(buf.bytes), 2, 30));
    }
    memcpy_rounds.push_back(time_gbps(
        [&] {
          check(cudaMemcpyAsync(buf.b, buf.a, buf.bytes, cudaMemcpyDeviceToDevice), "memcpy");
        },
        2.0 * double(buf.bytes), 2, 30));
  }
  const double ref = median(memcpy_rounds);
  std::printf(
      "\n# confirmation at %.4f GiB: %d interleaved rounds x 30 launches; median of "
      "round medians [min..max], %% of cudaMemcpyAsync\n",
      double(buf.bytes) / (1ull << 30), rounds);
  std::sort(finalists.begin(), finalists.end(),
            [slot](auto* x, auto* y) { return median(x->rounds[slot]) > median(y->rounds[slot]); });
  for (Fixed* f : finalists) {
    auto [lo, hi] = std::minmax_element(f->rounds[slot].begin(), f->rounds[slot].end());
    const double m = median(f->rounds[slot]);
    std::printf("%-52s %8.1f GB/s [%.1f..%.1f] %6.2f%%\n", label(*f).c_str(), m, *lo, *hi,
                100.0 * m / ref);
  }
  auto [lo, hi] = std::minmax_element(memcpy_rounds.begin(), memcpy_rounds.end());
  std::printf("%-52s %8.1f GB/s [%.1f..%.1f]\n", "cudaMemcpyAsync d2d", ref, *lo, *hi);
}

// Screens study `which`'s variants (ids starting with `only`) at 4 GiB and 1 GiB, checks each
// copy, confirms the best n_final per size against cudaMemcpyAsync, then scans sizes.
int study(int which, const std::string& only, int n_final, double persist_mib) {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attr");
  if (persist_mib != 0) {  // L2 set-aside for persisting (evict_last) lines; < 0: the maximum
    int max_persist = 0;
    check(cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, 0), "attr");
    const std::size_t want =
        persist_mib < 0 ? std::size_t(max_persist) : std::size_t(persist_mib * (1 << 20));
    check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, want), "persisting L2");
    std::size_t got = 0;
    check(cudaDeviceGetLimit(&got, cudaLimitPersistingL2CacheSize), "persisting L2");
    std::printf("# persisting L2 set-aside: %zu bytes (max %d)\n", got, max_persist);
  }
  // Two buffers just under 4 GiB each (8 GiB in all), not a multiple of 16: tails run too.
  const std::uint64_t large = (4ull << 30) - 13;
  const std::uint64_t sizes[2] = {large, (1ull << 30) + 4099};
  Buffers full;
  full.bytes = large;
  check(cudaMalloc(&full.a, large), "cudaMalloc a");
  check(cudaMalloc(&full.b, large), "cudaMalloc b");
  check(cudaMalloc(&full.sum, 8), "cudaMalloc sum");
  detail::write_kernel<Layout::grid_stride, 4, Store::plain>
      <<<sms * 4, 512>>>(full.a, large / 16, unsigned(large % 16), 7u);
  check(cudaDeviceSynchronize(), "fill");
  auto checksum_of = [&](const uint4* p, std::uint64_t bytes) {
    check(cudaMemset(full.sum, 0, 8), "memset");
    detail::read_kernel<Layout::grid_stride, 4, Load::plain>
        <<<sms * 3, 512>>>(p, bytes / 16, unsigned(bytes % 16), full.sum);
    unsigned long long got = 0;
    check(cudaMemcpy(&got, full.sum, 8, cudaMemcpyDeviceToHost), "checksum");
    return std::uint64_t{got};
  };
  std::vector<Fixed> all = which == 8   ? study8_variants(sms)
                           : which == 7 ? study7_variants(sms)
                           : which == 6 ? study6_variants(sms)
                           : which == 5 ? study5_variants(sms)
                           : which == 4 ? study4_variants(sms)
                           : which == 3 ? study3_variants(sms)
                           : which == 2 ? study2_variants(sms)
                                        : study_variants(sms);
  std::vector<Fixed*> chosen;
  for (Fixed& f : all) {
    if (f.v.id.rfind(only, 0) == 0)
      chosen.push_back(&f);
  }
  std::printf("# study: %zu configs, %d SMs, sizes %llu and %llu bytes\n", chosen.size(), sms,
              (unsigned long long)sizes[0], (unsigned long long)sizes[1]);
  int mismatches = 0;
  std::vector<Fixed*> runnable;
  for (Fixed* f : chosen) {
    const int resident = f->v.max_per_sm(f->block);
    if (resident * sms < f->grid) {
      std::printf("%-52s skipped: %d blocks/SM resident\n", label(*f).c_str(), resident);
      continue;
    }
    bool ok = true;
    for (int slot = 0; slot < 2; ++slot) {
      Buffers buf = full;
      buf.bytes = sizes[slot];
      check(cudaMemset(buf.b, 0xa5, large), "poison");
      f->screen[slot] =
          time_gbps([&] { f->v.launch(f->grid, f->block, buf); }, 2.0 * double(buf.bytes), 2, 15);
      ok = ok && checksum_of(buf.b, buf.bytes) == pattern_checksum(buf.bytes, 7u);
      if (slot == 1) {  // nothing written past the copy's end
        unsigned char after[16];
        check(cudaMemcpy(after, reinterpret_cast<unsigned char*>(buf.b) + buf.bytes, 16,
                         cudaMemcpyDeviceToHost),
              "after");
        for (unsigned char c : after)
          ok = ok && c == 0xa5;
      }
    }
    mismatches += ok ? 0 : 1;
    runnable.push_back(f);
    std::printf("%-52s %8.1f %8.1f GB/s (%d/SM)%s\n", label(*f).c_str(), f->screen[0], f->screen[1],
                resident, ok ? "" : "  MISMATCH");
  }
  std::printf("# mismatches: %d\n", mismatches);
  // Finalists: the best n_final at either size, plus the two baselines (first two entries).
  std::vector<Fixed*> finalists;
  for (int slot = 0; slot < 2; ++slot) {
    std::vector<Fixed*> by = runnable;
    std::sort(by.begin(), by.end(),
              [slot](auto* x, auto* y) { return x->screen[slot] > y->screen[slot]; });
    for (int i = 0; i < int(by.size()) && i < n_final; ++i) {
      if (std::find(finalists.begin(), finalists.end(), by[i]) == finalists.end())
        finalists.push_back(by[i]);
    }
  }
  for (Fixed* f : chosen) {
    if ((f == &all[0] || f == &all[1]) &&
        std::find(finalists.begin(), finalists.end(), f) == finalists.end()) {
      finalists.push_back(f);
    }
  }
  for (int slot = 0; slot < 2; ++slot) {
    Buffers buf = full;
    buf.bytes = sizes[slot];
    confirm(finalists, buf, slot, 5);
  }
  // cudaMemcpyAsync and the two best by size: does either depend on the buffer size?
  std::printf("\n# size scan (5 interleaved rounds x 30 launches, median of round medians)\n");
  std::vector<Fixed*> scan = {&all[0]};
  if (!finalists.empty()) {
    scan.push_back(*std::max_element(finalists.begin(), finalists.end(), [](auto* x, auto* y) {
      return median(x->rounds[0]) < median(y->rounds[0]);
    }));
  }
  for (const std::uint64_t mib : {256ull, 512ull, 1024ull, 2048ull, 4095ull}) {
    Buffers buf = full;
    buf.bytes = mib << 20;
    std::vector<double> mc;
    std::vector<std::vector<double>> ks(scan.size());
    for (int round = 0; round < 5; ++round) {
      for (std::size_t i = 0; i < scan.size(); ++i) {
        ks[i].push_back(time_gbps([&] { scan[i]->v.launch(scan[i]->grid, scan[i]->block, buf); },
                                  2.0 * double(buf.bytes), 2, 30));
      }
      mc.push_back(time_gbps(
          [&] {
            check(cudaMemcpyAsync(buf.b, buf.a, buf.bytes, cudaMemcpyDeviceToDevice), "memcpy");
          },
          2.0 * double(buf.bytes), 2, 30));
    }
    std::printf("%5llu MiB  memcpy %8.1f", (unsigned long long)mib, median(mc));
    for (std::size_t i = 0; i < scan.size(); ++i)
      std::printf("  %s %8.1f", label(*scan[i]).c_str(), median(ks[i]));
    std::printf("\n");
  }
  cudaFree(full.a);
  cudaFree(full.b);
  cudaFree(full.sum);
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "sweep")
    return sweep(argc > 2 ? std::atof(argv[2]) : 4.0, argc > 3 ? argv[3] : "");
  if (mode == "cases")
    return cases(argc > 2 ? std::atof(argv[2]) : 1024.0, argc > 3 ? argv[3] : "");
  if (mode.rfind("study", 0) == 0 && mode.size() <= 6) {
    return study(mode == "study8"   ? 8
                 : mode == "study7" ? 7
                 : mode == "study6" ? 6
                 : mode == "study5" ? 5
                 : mode == "study4" ? 4
                 : mode == "study3" ? 3
                 : mode == "study2" ? 2
                                    : 1,
                 argc > 2 ? argv[2] : "", argc > 3 ? std::atoi(argv[3]) : 8,
                 argc > 4 ? std::atof(argv[4]) : 0);
  }
  std::fprintf(stderr,
               "usage: bwtune sweep [GiB [prefix]] | bwtune cases [MiB [allocator]] | "
               "bwtune study|study2|study3|study4|study5|study6|study7|study8 [prefix [finalists "
               "per size [persisting L2 MiB, -1 max]]]\n");
  return 2;
}
