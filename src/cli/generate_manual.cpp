// gb10tune_manual OUTDIR: writes the man pages (OUTDIR/man1/*.1) and the shell completions
// (OUTDIR/completions/{gb10tune.bash,_gb10tune,gb10tune.fish}) generated from gb10tune's own
// option tables. Run by the build; exits 1 naming the file it could not write.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app.hpp"
#include "command_tree.hpp"
#include "gb10tune/manual/completion.hpp"
#include "gb10tune/manual/man_page.hpp"
#include "gb10tune/render/version_render.hpp"

namespace {

bool save_text(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "gb10tune_manual: cannot write " << file.string()
              << "; check that the build folder is writable and the disk not full\n";
  }
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gb10tune_manual OUTDIR\n";
    return 2;
  }
  using namespace gb10tune;
  const std::filesystem::path dir = argv[1];
  const auto line = cli::make_command_line();
  const manual::CommandEntry root = cli::describe_command_tree(line->app);
  bool ok = true;
  for (const manual::CommandEntry* command : manual::all_commands(root)) {
    ok = save_text(dir / "man1" / manual::man_page_file(*command),
                   manual::render_man_page(root, *command, render::build_info().version));
  }
  ok = save_text(dir / "completions" / "gb10tune.bash", manual::render_bash_completion(root)) && ok;
  ok = save_text(dir / "completions" / "_gb10tune", manual::render_zsh_completion(root)) && ok;
  ok = save_text(dir / "completions" / "gb10tune.fish", manual::render_fish_completion(root)) && ok;
  return ok ? 0 : 1;
}
