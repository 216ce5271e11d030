#include "support/fake_bandwidth.hpp"

namespace gb10tune::testing {

kernels::CaseResult FakeBandwidth::operator()(const kernels::CaseSpec& spec) {
  calls.push_back(spec);
  kernels::CaseResult result;
  const int buffers =
      spec.operation == kernels::Operation::copy || spec.operation == kernels::Operation::memcpy_d2d
          ? 2
          : 1;
  result.traffic_bytes_per_sample = spec.bytes * static_cast<std::uint64_t>(buffers) *
                                    static_cast<std::uint64_t>(spec.launches_per_sample);
  const double bytes = ignore_size ? double(1 << 30) : double(result.traffic_bytes_per_sample);
  const double seconds = bytes / (gbps.at(spec.allocator) * 1e9);
  for (int i = 0; i < spec.samples; ++i) {
    // Deterministic spread: alternate above and below the model figure.
    const double factor = 1.0 + jitter * ((i % 3) - 1);
    result.sample_seconds.push_back(seconds * factor);
  }
  result.warmup_seconds = warmup_seconds;
  result.status = fail_validation ? kernels::CaseStatus::failed : kernels::CaseStatus::ok;
  result.validated = !fail_validation;
  result.validation = fail_validation ? "checksum 0x1 != expected 0x2" : "checksum matches";
  result.reason = fail_validation ? "validation failed: checksum 0x1 != expected 0x2" : "";
  result.kernel = "fake";
  return result;
}

}  // namespace gb10tune::testing
