#include "gb10tune/tune/search.hpp"

#include "gb10tune/tune/coordinate_search.hpp"
#include "gb10tune/tune/grid_search.hpp"

namespace gb10tune::tune {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::better:
      return "better";
    case Outcome::not_better:
      return "not better";
    case Outcome::does_not_fit:
      return "does not fit";
    case Outcome::failed:
      return "failed";
  }
  return "unknown";
}

std::string_view to_string(Strategy strategy) {
  return strategy == Strategy::grid ? "grid" : "coordinate";
}

std::optional<Strategy> parse_strategy(std::string_view text) {
  if (text == "coordinate") {
    return Strategy::coordinate;
  }
  if (text == "grid") {
    return Strategy::grid;
  }
  return std::nullopt;
}

std::unique_ptr<Search> make_search(Strategy strategy, std::vector<KnobPlan> knobs,
                                    nlohmann::json start) {
  if (strategy == Strategy::grid) {
    return std::make_unique<GridSearch>(std::move(knobs), std::move(start));
  }
  return std::make_unique<CoordinateSearch>(std::move(knobs), std::move(start));
}

std::vector<KnobPlan> searched_knobs(std::vector<KnobPlan> knobs) {
  std::vector<KnobPlan> searched;
  for (KnobPlan& plan : knobs) {
    if (plan.knob != nullptr && plan.skipped.empty() && plan.values.size() >= 2) {
      searched.push_back(std::move(plan));
    }
  }
  return searched;
}

}  // namespace gb10tune::tune
