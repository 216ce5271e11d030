#include "gb10tune/launch/repack_features.hpp"

#include <chrono>

#include "gb10tune/server/system_info.hpp"
#include "gb10tune/sys/cpuinfo.hpp"
#include "gb10tune/verify/checks.hpp"

namespace gb10tune::launch {

plan::RepackFeatures launch_repack_features(const platform::Sysroot& root,
                                            const std::string& server_path,
                                            const model::ModelFacts& model,
                                            const plan::RepackOptions& options, bool gpu_in_use) {
  plan::RepackFeatures bound;
  if (const auto cpu = sys::read_cpuinfo(root)) {
    bound = plan::repack_features_of_cpu(*cpu);
  } else {
    bound.source = "the CPU's features are unknown (" + cpu.error().message + ")";
  }
  const plan::RepackSetting setting = plan::repack_setting(options, bound, gpu_in_use, false);
  const auto everything_on_cpu = [](std::int64_t) { return true; };
  if (!setting.enabled || setting.gpu_host_buffer_first ||
      plan::plan_cpu_repack(model, setting, everything_on_cpu).buffer_bytes == 0) {
    return bound;  // the build's own answer would change nothing
  }
  const auto line = server::read_build_system_info(server_path, std::chrono::seconds(10));
  if (!line) {
    // The first clause of the reason: the run's output tail would not fit a table row.
    const std::string& why = line.error().message;
    bound.source += "; the build's own are unknown: " + why.substr(0, why.find(" ("));
    return bound;
  }
  return plan::repack_features_of_build(verify::parse_system_info_features(*line),
                                        "the build's system_info line");
}

}  // namespace gb10tune::launch
