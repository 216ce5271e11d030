#include "support/report_states.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::testing {

report::ReportBundle captured_report_state(const std::string& state) {
  auto bundle = report::load_report_bundle(fixture("report/" + state));
  EXPECT_TRUE(bundle) << bundle.error().message;
  return bundle ? *bundle : report::ReportBundle{};
}

}  // namespace gb10tune::testing
