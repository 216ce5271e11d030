// A stand-in for kernels::run_case: answers each case with samples that follow a model
// bandwidth per allocator, so that the bench logic can be tested without a GPU.
#pragma once

#include <map>
#include <vector>

#include "gb10tune/kernels/bandwidth.hpp"

namespace gb10tune::testing {

class FakeBandwidth {
 public:
  // GB/s the fake "hardware" reaches per allocator (defaults: GB10-like figures of K1).
  std::map<kernels::Allocator, double> gbps{
      {kernels::Allocator::device, 237.0},           {kernels::Allocator::managed, 162.0},
      {kernels::Allocator::managed_prefetch, 162.0}, {kernels::Allocator::managed_advise, 162.0},
      {kernels::Allocator::pinned_host, 160.0},      {kernels::Allocator::pageable_malloc, 150.0},
      {kernels::Allocator::pageable_mmap, 150.0}};
  double jitter = 0.01;                  // relative spread of the samples
  bool fail_validation = false;          // every case reports a checksum mismatch
  bool ignore_size = false;              // times do not scale with the buffer (a broken timer)
  std::vector<double> warmup_seconds;    // the untimed runs every case reports (none by default)
  std::vector<kernels::CaseSpec> calls;  // every spec it was asked to run

  kernels::CaseResult operator()(const kernels::CaseSpec& spec);
};

}  // namespace gb10tune::testing
