// DEV TOOL, not part of gb10tune: times every kernel variant of src/kernels/bandwidth_kernels.cuh
// on one GPU so that bandwidth.cu can pick the best, and prints run_case's figures for every
// allocator x operation. See tools/bwtune/README.md.
//
//   bwtune sweep [GiB [prefix]]   variants (ids starting with prefix) x block sizes x blocks/SM
//   bwtune cases [MiB [allocator]]   run_case for every allocator (or one) x operation
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
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

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "sweep")
    return sweep(argc > 2 ? std::atof(argv[2]) : 4.0, argc > 3 ? argv[3] : "");
  if (mode == "cases")
    return cases(argc > 2 ? std::atof(argv[2]) : 1024.0, argc > 3 ? argv[3] : "");
  std::fprintf(stderr, "usage: bwtune sweep [GiB [prefix]] | bwtune cases [MiB [allocator]]\n");
  return 2;
}
