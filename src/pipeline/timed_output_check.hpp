#pragma once
// The check of every timed output (docs/architecture.md, "Timed inputs and the check of every
// timed output"): a block's samples file from process C, the values of each call's outputs at
// positions drawn after the call returned, against process R's for the same inputs and the
// same positions, under the full tolerance rule (compare/tolerance.hpp). Process C is
// untrusted: its file and its answer are validated here.
#include "compare/compare_outputs.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace kbench {

// What one side's block said about its outputs: the samples file it wrote and which calls
// returned which output signature ("float32[128, 10];float32[1]": [0, 1, ...]).
struct BlockSamples {
  std::filesystem::path file;
  nlohmann::json signatures = nlohmann::json::object();
};

// The samples file of `block` in a side's outputs directory: where the worker writes it. The
// orchestrator never reads a path from a candidate's answer (one naming the reference's file
// would compare the reference with itself).
std::filesystem::path samples_file(const std::filesystem::path& outputs_dir, int block);

// `signatures` of a time_block answer and the samples file the caller expects; a malformed
// field leaves the signatures empty, which check_timed_outputs reports.
BlockSamples block_samples(const nlohmann::json& answer, std::filesystem::path file);

// Empty when every call of the block matched; otherwise a sentence naming the first call that
// did not (`first_call` numbers the block's calls within the whole timing: call 0 is the first
// timed call of the evaluation).
std::string check_timed_outputs(const BlockSamples& candidate, const BlockSamples& reference,
                                int block, int first_call,
                                const compare::ToleranceOverride& tolerance);

} // namespace kbench
