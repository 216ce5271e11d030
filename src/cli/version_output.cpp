#include "version_output.hpp"

#include "gb10tune/render/version_render.hpp"

namespace gb10tune::cli {

ExitCode print_version(Context& ctx, bool json) {
  platform::NvmlReport nvml;
  nvml.detail = "not queried (no GPU backend)";
  if (ctx.gpu != nullptr) {
    nvml = ctx.gpu->query_nvml();
  }
  const render::VersionReport version = render::make_version_report(render::build_info(), nvml);
  *ctx.out << (json ? render::dump_document(render::version_json(version))
                    : render::render_version_text(version));
  return ExitCode::ok;
}

}  // namespace gb10tune::cli
