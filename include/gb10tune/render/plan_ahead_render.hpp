// The report of a plan before a download (gb10tune plan): the model and how much of it was
// read, the machine, the build whose flags were assumed, the what-fits table, the decode
// ceiling and launch's choice; as text or as one JSON document. The "plan" part (machine,
// build, table, ceiling, choice) does not depend on where the header was read from: a local
// file and the same file over HTTP give the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gb10tune/launch/plan_model.hpp"
#include "gb10tune/launch/target_machine.hpp"
#include "gb10tune/launch/what_fits.hpp"
#include "gb10tune/render/document.hpp"

namespace gb10tune::render {

// What the report shows; the pointers must outlive the rendering.
struct PlanAheadView {
  const launch::PlanModel* model = nullptr;
  const launch::TargetMachine* machine = nullptr;
  std::string build;  // "the flags of llama.cpp …, no binary" or the binary used
  const launch::WhatFits* fits = nullptr;
};

// The command launch would run, with the model given by its file name (the download's
// location is not known yet) and, for an assumed build, "llama-server" as the program.
std::vector<std::string> planned_argv(const launch::LaunchChoice& choice);

// The text report.
std::string render_plan_ahead(const PlanAheadView& view, const TextStyle& style);

// The document: "model" (files, sizes, bytes read) and "plan" (the rest).
nlohmann::json plan_ahead_json(const PlanAheadView& view);

// The decode ceiling's line and, when known, its table by depth with what to expect.
std::string render_decode_ceiling(const launch::DecodeCeiling& ceiling);

// The decode ceiling as plan's and launch's documents carry it.
nlohmann::json decode_ceiling_json(const launch::DecodeCeiling& ceiling);

}  // namespace gb10tune::render
