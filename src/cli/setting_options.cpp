#include "setting_options.hpp"

#include <string>

#include "gb10tune/launch/setting_specs.hpp"

namespace gb10tune::cli {

void add_setting_options(CLI::App& sub, launch::LaunchRequest& request) {
  launch::LaunchRequest* r = &request;
  for (const launch::SettingSpec& spec : launch::launch_setting_specs()) {
    const std::string key(spec.key);
    if (!spec.option.empty()) {
      const std::string names(spec.option);
      const std::string help = launch::setting_help(spec);
      CLI::Option* option = nullptr;
      if (spec.kind == launch::SettingKind::integer) {
        option = sub.add_option_function<std::int64_t>(
            names, [r, key](std::int64_t value) { r->values[key] = value; }, help);
      } else if (spec.kind == launch::SettingKind::number) {
        option = sub.add_option_function<double>(
            names, [r, key](double value) { r->values[key] = value; }, help);
      } else {
        option = sub.add_option_function<std::string>(
            names, [r, key](const std::string& value) { r->values[key] = value; }, help);
      }
      option->option_text(launch::setting_value_text(spec));
    }
    for (const launch::SettingFlag& flag : spec.flags) {
      sub.add_flag_callback(
          std::string(flag.name), [r, key, value = flag.value] { r->values[key] = value; },
          std::string(flag.help));
    }
  }
}

}  // namespace gb10tune::cli
