#include "gb10tune/render/document.hpp"

#include "gb10tune/version.hpp"

namespace gb10tune::render {

nlohmann::json make_document(std::string_view command) {
  return nlohmann::json{{"schema_version", kSchemaVersion},
                        {"tool", kToolName},
                        {"version", kToolVersion},
                        {"command", command}};
}

std::string dump_document(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string dump_document_line(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void add_failure(nlohmann::json& doc, int exit_code, std::string_view message) {
  doc["exit_code"] = exit_code;
  doc["error"] = message;
}

nlohmann::json failure_document(std::string_view command, int exit_code, std::string_view message) {
  nlohmann::json doc = make_document(command);
  add_failure(doc, exit_code, message);
  return doc;
}

TextStyle TextStyle::for_stream(bool is_tty, const platform::Environment& env) {
  return TextStyle(is_tty && !env.contains("NO_COLOR"));
}

std::string TextStyle::wrap(std::string_view code, std::string_view text) const {
  if (!m_color) {
    return std::string(text);
  }
  return "\033[" + std::string(code) + "m" + std::string(text) + "\033[0m";
}

std::string TextStyle::bold(std::string_view text) const {
  return wrap("1", text);
}
std::string TextStyle::green(std::string_view text) const {
  return wrap("32", text);
}
std::string TextStyle::yellow(std::string_view text) const {
  return wrap("33", text);
}
std::string TextStyle::red(std::string_view text) const {
  return wrap("31", text);
}
std::string TextStyle::dim(std::string_view text) const {
  return wrap("2", text);
}

}  // namespace gb10tune::render
