#include "gb10tune/render/version_render.hpp"

#include <fmt/format.h>

#include "gb10tune/render/document.hpp"
#include "gb10tune/util/strings.hpp"
#include "gb10tune/version.hpp"

namespace gb10tune::render {

VersionReport make_version_report(const BuildInfo& build, const platform::NvmlReport& nvml) {
  VersionReport report;
  report.build = build;
  report.nvml_loaded = nvml.loaded;
  report.nvml_detail = nvml.detail;
  report.driver_version = nvml.loaded ? nvml.driver_version : "";
  return report;
}

std::string render_version_text(const VersionReport& report) {
  const BuildInfo& b = report.build;
  std::string text = fmt::format("{} {}\n", kToolName, b.version);
  text += fmt::format("  git          {}\n",
                      b.git_describe.empty() ? "not built from a git checkout" : b.git_describe);
  text += fmt::format("  build type   {}\n", b.build_type.empty() ? "unset" : b.build_type);
  text += b.cuda ? fmt::format("  CUDA         on (architectures {})\n", b.cuda_architectures)
                 : std::string("  CUDA         off (built without CUDA)\n");
  if (report.nvml_loaded) {
    text += fmt::format("  NVML         loaded ({}), driver {}\n", report.nvml_detail,
                        report.driver_version.empty() ? "unknown" : report.driver_version);
  } else {
    // The detail says it is not loaded and why: "NVML not loaded: libnvidia-ml.so.1: …".
    std::string_view why = report.nvml_detail;
    if (why.starts_with("NVML ")) {
      why.remove_prefix(5);
    }
    text += fmt::format("  NVML         {}\n", why);
  }
  return text;
}

nlohmann::json version_json(const VersionReport& report) {
  const BuildInfo& b = report.build;
  nlohmann::json doc = make_document("version");
  doc["build"] = {{"version", b.version},
                  {"project_version", b.project_version},
                  {"git_describe", b.git_describe.empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(b.git_describe)},
                  {"build_type", b.build_type},
                  {"cuda", b.cuda},
                  {"cuda_architectures", nlohmann::json::array()}};
  for (const std::string_view arch : split(b.cuda_architectures, ';')) {
    if (!arch.empty()) {
      doc["build"]["cuda_architectures"].push_back(std::string(arch));
    }
  }
  doc["nvml"] = {{"loaded", report.nvml_loaded},
                 {"detail", report.nvml_detail},
                 {"driver_version", report.nvml_loaded && !report.driver_version.empty()
                                        ? nlohmann::json(report.driver_version)
                                        : nlohmann::json(nullptr)}};
  return doc;
}

}  // namespace gb10tune::render
