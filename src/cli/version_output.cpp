#include "version_output.hpp"

#include "gb10tune/report/build_info.hpp"

namespace gb10tune::cli {

ExitCode print_version(Context& ctx, bool json) {
  platform::NvmlReport nvml;
  nvml.detail = "not queried (no GPU backend)";
  if (ctx.gpu != nullptr) {
    nvml = ctx.gpu->query_nvml();
  }
  const report::VersionReport version = report::make_version_report(report::build_info(), nvml);
  *ctx.out << (json ? report::dump_document(report::version_json(version))
                    : report::render_version_text(version));
  return ExitCode::ok;
}

}  // namespace gb10tune::cli
