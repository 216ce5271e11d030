#include "failure.hpp"

#include "gb10tune/platform/interrupt.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::cli {

ExitCode after_interrupt(ExitCode code) {
  if (code != ExitCode::interrupted) {
    return code;
  }
  const int signal = platform::InterruptGuard::last_signal();
  return signal == 0 ? code : exit_code_for_signal(signal);
}

ExitCode report_failure(Context& ctx, const Error& error, bool one_line) {
  const ExitCode code = after_interrupt(error.code);
  if (!starts_with(error.message, "gb10tune ")) {
    *ctx.err << "gb10tune " << ctx.command << ": ";
  }
  *ctx.err << error.message << "\n";
  if (ctx.json) {
    const auto doc = render::failure_document(ctx.command, to_int(code), error.message);
    *ctx.out << (one_line ? render::dump_document_line(doc) : render::dump_document(doc));
  }
  return code;
}

}  // namespace gb10tune::cli
