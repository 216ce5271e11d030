#include "gb10tune/tune/tune_budget.hpp"

#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gb10tune/util/strings.hpp"

namespace gb10tune::tune {

TuneBudget::TuneBudget(double budget_s) : m_budget_s(budget_s) {
  if (!(budget_s > 0)) {
    throw std::invalid_argument("TuneBudget: the budget must be > 0 (parse_duration_s checks it)");
  }
}

void TuneBudget::add_restart(double seconds) {
  m_restart_total_s += seconds;
  ++m_restarts;
}

void TuneBudget::add_run(double seconds, int samples) {
  if (samples > 0) {
    m_sample_total_s += seconds;
    m_samples += samples;
  }
}

std::optional<double> TuneBudget::restart_s() const {
  return m_restarts > 0 ? std::optional(m_restart_total_s / m_restarts) : std::nullopt;
}

std::optional<double> TuneBudget::sample_s() const {
  return m_samples > 0 ? std::optional(m_sample_total_s / m_samples) : std::nullopt;
}

std::optional<double> TuneBudget::round_s(int samples, bool restart) const {
  const auto sample = sample_s();
  if (!sample) {
    return std::nullopt;
  }
  return 2 * (*sample * samples + (restart ? restart_s().value_or(0) : 0.0));
}

std::optional<double> TuneBudget::final_s(int samples, bool fresh_winner) const {
  const auto sample = sample_s();
  if (!sample) {
    return std::nullopt;
  }
  return (fresh_winner ? 2 : 1) * *sample * samples +
         (fresh_winner ? restart_s().value_or(0) : 0.0);
}

bool TuneBudget::fits(double elapsed_s, std::optional<double> cost_s, double reserve_s) const {
  return !cost_s || elapsed_s + *cost_s + reserve_s <= m_budget_s;
}

std::optional<double> parse_duration_s(std::string_view text) {
  text = trim(text);
  if (text.empty()) {
    return std::nullopt;
  }
  double total = 0;
  std::string_view units = "hms";  // each unit at most once, largest first
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) != 0 || text[digits] == '.')) {
      ++digits;
    }
    const std::string number(text.substr(0, digits));
    if (digits == 0 || number.front() == '.' || number.back() == '.' ||
        number.find('.') != number.rfind('.')) {
      return std::nullopt;
    }
    const double value = std::stod(number);
    text.remove_prefix(digits);
    if (text.empty()) {  // a bare number: seconds, only on its own
      if (units != "hms") {
        return std::nullopt;
      }
      total = value;
      break;
    }
    const std::size_t unit = units.find(text.front());
    if (unit == std::string_view::npos) {
      return std::nullopt;
    }
    total += value * (text.front() == 'h' ? 3600 : text.front() == 'm' ? 60 : 1);
    units.remove_prefix(unit + 1);
    text.remove_prefix(1);
  }
  return total > 0 && std::isfinite(total) ? std::optional(total) : std::nullopt;
}

}  // namespace gb10tune::tune
