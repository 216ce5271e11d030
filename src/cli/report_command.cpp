#include "report_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/render/document.hpp"
#include "gb10tune/report/report_bundle.hpp"
#include "gb10tune/report/report_pages.hpp"
#include "gb10tune/report/report_redact.hpp"
#include "gb10tune/util/strings.hpp"

namespace gb10tune::cli {

namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::string out_dir;  // --out DIR: every format into DIR
  std::string output;   // -o FILE ("-": stdout)
  std::string format;   // html, md, json; "" = from -o's extension, else html
  std::string state;    // --state DIR: another state directory
  bool include_paths = false;
  bool json = false;
};

// The format of `-o FILE` when --format is not given: from the extension (.html, .htm, .md,
// .json), html for stdout, the default file and a name without one; a usage Error for another
// extension (x.pdf would get HTML without a word).
Expected<std::string> format_for(const ReportOptions& o) {
  if (!o.format.empty()) {
    return o.format;
  }
  const std::string ext = fs::path(o.output).extension().string();
  if (ext.empty() || ext == ".html" || ext == ".htm") {
    return std::string("html");
  }
  if (ext == ".md" || ext == ".json") {
    return ext.substr(1);
  }
  return Error{fmt::format("{}: {} is not a format report writes (.html, .md, .json); name the "
                           "file with one of those extensions, or add --format html|md|json to "
                           "write that format under this name.",
                           o.output, ext),
               ExitCode::usage};
}

std::string render(const report::ReportBundle& bundle, const std::string& format) {
  if (format == "json") {
    return render::dump_document(report::bundle_to_json(bundle));
  }
  const report::ReportView view = report::make_report_view(bundle);
  return format == "md" ? report::render_report_markdown(view) : report::render_report_html(view);
}

report::Identity identity_of(const Context& ctx) {
  report::Identity who;
  who.home = ctx.env.get("HOME").value_or("");
  who.user = ctx.env.get("USER").value_or(ctx.env.get("LOGNAME").value_or(""));
  if (auto host = ctx.sysroot.read_file("/proc/sys/kernel/hostname")) {
    who.host = std::string(trim(*host));
  }
  return who;
}

Expected<report::ReportBundle> gather(const ReportOptions& o, const Context& ctx) {
  fs::path dir = o.state;
  if (dir.empty()) {
    auto state = platform::state_dir(ctx.env);
    if (!state) {
      return state.error();
    }
    dir = *state;
  }
  auto bundle = report::load_report_bundle(dir);
  if (bundle && !o.include_paths) {
    report::redact_bundle(*bundle, identity_of(ctx));
  }
  return bundle;
}

// Writes `format` to `path`; a line on stdout says where.
Status write_one(const report::ReportBundle& bundle, const std::string& format,
                 const fs::path& path, Context& ctx) {
  const std::string text = render(bundle, format);
  if (path == "-") {
    *ctx.out << text;
    return {};
  }
  if (Status written = platform::write_file_atomic(path, text); !written) {
    return Error{fmt::format("the report could not be written: {}; name a writable file with -o "
                             "FILE or a directory with --out DIR.",
                             written.error().message),
                 ExitCode::failed};
  }
  if (!ctx.json) {
    *ctx.out << fmt::format("report ({}) written to {}\n", format, path.string());
  }
  return {};
}

ExitCode run(const ReportOptions& o, Context& ctx) {
  if (!o.out_dir.empty() && !o.output.empty()) {
    return report_failure(ctx, Error{"report: --out DIR writes every format and -o FILE one; "
                                     "give one of them.",
                                     ExitCode::usage});
  }
  const auto one_format = format_for(o);
  if (!one_format) {
    return report_failure(ctx, one_format.error());
  }
  auto bundle = gather(o, ctx);
  if (!bundle) {
    return report_failure(ctx, bundle.error());
  }
  for (const std::string& problem : bundle->problems) {
    *ctx.err << "warning: " << problem << "\n";
  }
  if (o.json && o.out_dir.empty() && o.output.empty()) {
    *ctx.out << render::dump_document(report::bundle_to_json(*bundle));
    return ExitCode::ok;
  }
  Status status;
  if (!o.out_dir.empty()) {
    if (status = platform::make_private_dir(o.out_dir); status) {
      for (const char* format : {"html", "md", "json"}) {
        status =
            write_one(*bundle, format, fs::path(o.out_dir) / fmt::format("report.{}", format), ctx);
        if (!status) {
          break;
        }
      }
    }
  } else {
    status =
        write_one(*bundle, *one_format,
                  o.output.empty() ? fs::path("gb10tune-report.html") : fs::path(o.output), ctx);
  }
  if (!status) {
    return report_failure(ctx, status.error());
  }
  if (o.json) {
    *ctx.out << render::dump_document(report::bundle_to_json(*bundle));
  }
  return ExitCode::ok;
}

}  // namespace

Runner setup_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Gather what the state directory holds (probe, bench, the launch plan and record, the "
      "last verify, saved bench server runs, tune's journal) into one self-contained HTML page "
      "with charts, a Markdown version for forum posts, or one JSON document.");
  sub->add_option("-o,--output", o->output,
                  "Write one report to FILE (default gb10tune-report.html; - for stdout); its "
                  "format from --format or the extension (.html, .md, .json)")
      ->option_text("FILE");
  sub->add_option("--out", o->out_dir,
                  "Write report.html, report.md and report.json into DIR (created 0700 if "
                  "needed)")
      ->option_text("DIR");
  sub->add_option("--format", o->format, "html (default), md or json, for -o")
      ->check(CLI::IsMember({"html", "md", "json"}))
      ->option_text("html|md|json");
  sub->add_option("--state", o->state,
                  "Read this state directory instead of $XDG_STATE_HOME/gb10tune")
      ->option_text("DIR");
  sub->add_flag("--include-paths", o->include_paths,
                "Keep home directories, the user name and the host name (left out by default)");
  sub->add_flag("--json", o->json, "Print the whole bundle as one JSON document on stdout");
  sub->footer(exit_code_footer(
      {{ExitCode::ok, "written (parts the state lacks say which command produces them)"},
       {ExitCode::failed, "the report could not be written"},
       {ExitCode::usage, "bad options, or no state directory"}}));
  return [o](Context& ctx) { return run(*o, ctx); };
}

}  // namespace gb10tune::cli
