// The captured state directories of tests/fixtures/report/ for the report's tests.
#pragma once

#include <string>

#include "gb10tune/report/report_bundle.hpp"

namespace gb10tune::testing {

// The bundle of tests/fixtures/report/<state> ("h200", "cpu-server"); fails the test (and returns
// an empty bundle) when it does not load.
report::ReportBundle captured_report_state(const std::string& state);

}  // namespace gb10tune::testing
