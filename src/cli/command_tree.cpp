#include "command_tree.hpp"

#include "gb10tune/util/strings.hpp"

namespace gb10tune::cli {

namespace {

// The option as the manual sees it. CLI11's type name is "TYPE[:VALIDATOR…]", each validator
// described by itself ("{a,b,c}" for a set).
manual::OptionEntry describe_option(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames()) {
    names.push_back("-" + name);
  }
  for (const std::string& name : option.get_lnames()) {
    names.push_back("--" + name);
  }
  const std::string type_name = option.get_type_name();
  const std::vector<std::string_view> parts = split(type_name, ':');
  std::vector<std::string> validators;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    validators.emplace_back(parts[i]);
  }
  const std::string value_text =
      option.get_option_text().empty() ? std::string(parts.front()) : option.get_option_text();
  return manual::classify_value(std::move(names), option.get_expected_max() > 0, value_text,
                                option.get_description(), validators);
}

manual::CommandEntry describe_app(const CLI::App& app, std::vector<std::string> path) {
  manual::CommandEntry entry;
  entry.path = std::move(path);
  entry.description = app.get_description();
  entry.footer = app.get_footer();
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) {
      continue;  // hidden
    }
    if (!option->nonpositional()) {
      std::string word =
          option->get_option_text().empty() ? option->get_name(true) : option->get_option_text();
      if (option->get_expected_max() > 1) {
        word += "...";
      }
      if (option->get_description().starts_with("After --")) {
        word = "-- " + word;  // launch's llama-server arguments
      }
      entry.positionals.push_back(option->get_required() ? word : "[" + word + "]");
      continue;
    }
    entry.options.push_back(describe_option(*option));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) {
      continue;  // hidden
    }
    std::vector<std::string> sub_path = entry.path;
    sub_path.push_back(sub->get_name());
    entry.subcommands.push_back(describe_app(*sub, std::move(sub_path)));
  }
  return entry;
}

}  // namespace

manual::CommandEntry describe_command_tree(const CLI::App& app) {
  return describe_app(app, {});
}

}  // namespace gb10tune::cli
