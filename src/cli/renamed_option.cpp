#include "renamed_option.hpp"

namespace gb10tune::cli {

CLI::Option* keep_renamed(CLI::Option* old_option, std::string new_name,
                          std::vector<RenamedOption>& renamed) {
  old_option->group("");  // hidden
  const std::string old_name = old_option->get_lnames().empty()
                                   ? "-" + old_option->get_snames().front()
                                   : "--" + old_option->get_lnames().front();
  renamed.push_back({old_option, old_name, std::move(new_name)});
  return old_option;
}

void note_renamed(const std::vector<RenamedOption>& renamed, Context& ctx) {
  for (const RenamedOption& entry : renamed) {
    if (entry.option->count() > 0) {
      *ctx.err << "gb10tune " << ctx.command << ": " << entry.old_name << " is now "
               << entry.new_name << " (the old name still works, but will go)\n";
    }
  }
}

}  // namespace gb10tune::cli
