#include "state_save.hpp"

#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/trust/private_files.hpp"

namespace gb10tune::cli {

void save_to_state(Context& ctx, std::string_view file_name, std::string_view what,
                   const nlohmann::json& doc, bool announce) {
  const auto dir = platform::state_dir(ctx.env);
  if (!dir) {
    *ctx.err << "warning: " << what << " not saved: " << dir.error().message << "\n";
    return;
  }
  if (const Status made = trust::ensure_private_dir(*dir); !made) {
    *ctx.err << "warning: " << what << " not saved: " << made.error().message << "\n";
    return;
  }
  const auto path = *dir / file_name;
  if (const Status written = platform::write_file_atomic(path, render::dump_document(doc));
      !written) {
    *ctx.err << "warning: " << what << " not saved: " << written.error().message << "\n";
    return;
  }
  if (announce) {
    *ctx.err << what << " saved to " << path.string() << "\n";
  }
}

}  // namespace gb10tune::cli
