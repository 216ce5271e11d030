// Size options shared by the subcommands (--size, --reserve, --overhead): the core's reader,
// which launch's planner uses for the same settings.
#pragma once

#include "gb10tune/util/size_option.hpp"
