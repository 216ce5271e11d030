#include "bench_compare_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "exit_code_footer.hpp"
#include "failure.hpp"
#include "gb10tune/bench/compare.hpp"
#include "gb10tune/bench/server_result.hpp"
#include "gb10tune/platform/state_dir.hpp"
#include "gb10tune/render/bench_server_render.hpp"
#include "gb10tune/util/text_file.hpp"

namespace gb10tune::cli {

namespace {

namespace fs = std::filesystem;

struct CompareOptions {
  std::string a;
  std::string b;
  bool json = false;
};

// The names saved under `dir`/bench, sorted, for the "no such result" message.
std::string saved_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "bench", ec)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    return "none saved yet: run `gb10tune bench server --save NAME`";
  }
  std::string out = "saved:";
  for (const std::string& name : names) {
    out += " " + name;
  }
  return out;
}

Expected<bench::ServerBenchResult> load(const std::string& name_or_path, const Context& ctx) {
  const auto dir = platform::state_dir(ctx.env);
  const fs::path state = dir ? *dir : fs::path();
  const auto path = bench::resolve_result(name_or_path, state);
  if (!path) {
    return path.error();
  }
  const auto text = read_text_file(*path);
  if (!text) {
    const bool is_name = path->string() != name_or_path;
    return Error{is_name ? fmt::format("no saved result '{}' ({}) ({})", name_or_path,
                                       path->string(), saved_names(state))
                         : fmt::format("cannot read {}; give a saved result's name or the path of "
                                       "a `bench server --json` document",
                                       name_or_path),
                 ExitCode::usage};
  }
  const auto doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Error{fmt::format("{} is not valid JSON; give a result saved by `gb10tune bench "
                             "server --save NAME`",
                             path->string()),
                 ExitCode::usage};
  }
  return bench::result_from_json(doc, path->string());
}

ExitCode run(const CompareOptions& options, Context& ctx) {
  const auto a = load(options.a, ctx);
  if (!a) {
    return report_failure(ctx, a.error());
  }
  const auto b = load(options.b, ctx);
  if (!b) {
    return report_failure(ctx, b.error());
  }
  const bench::Comparison comparison = bench::compare_results(*a, *b, options.a, options.b);
  if (options.json) {
    *ctx.out << render::dump_document(render::comparison_to_json(comparison));
  } else {
    *ctx.out << render::render_comparison_text(comparison, ctx.out_style());
  }
  if (options.json && !comparison.warning.empty()) {
    *ctx.err << "warning: " << comparison.warning << "\n";
  }
  return ExitCode::ok;
}

}  // namespace

Runner setup_bench_compare(CLI::App& bench) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* sub = bench.add_subcommand(
      "compare",
      "Compare two saved server benchmarks: each metric's medians, the change in %, whether "
      "it is beyond the noise of the two runs, and which settings differ.");
  sub->add_option("A", options->a, "The baseline: a name saved with --save, or a file")->required();
  sub->add_option("B", options->b, "The run to judge against it")->required();
  sub->add_flag("--json", options->json, "Print one JSON document instead of text");
  sub->footer(
      "A change is beyond the noise when the confidence intervals of the two medians (95% "
      "from 6 samples on) do not overlap and each run has at least 5 samples. When both runs "
      "measured the same requests in the same order the comparison is paired: B/A is the "
      "geometric mean of the per-request ratios, and a change is beyond the noise when its 95% "
      "Student-t interval excludes 1 (at least 3 pairs).\n" +
      exit_code_footer({{ExitCode::ok, "compared (whatever the verdict)"},
                        {ExitCode::usage, "usage error, or a result is missing or unreadable"}}));
  return [options](Context& ctx) { return run(*options, ctx); };
}

}  // namespace gb10tune::cli
