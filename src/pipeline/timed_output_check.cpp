#include "pipeline/timed_output_check.hpp"

#include "compare/safetensors.hpp"
#include "compare/tolerance.hpp"

#include <fmt/format.h>

namespace kbench {
namespace {

// The only signature a side reported, or empty when its calls returned more than one.
std::string single_signature(const nlohmann::json& signatures) {
  return signatures.is_object() && signatures.size() == 1 ? signatures.begin().key() : "";
}

// The first call whose signature differs from `expected`, with the one it returned.
std::pair<int, std::string> first_other_signature(const nlohmann::json& signatures,
                                                  const std::string& expected) {
  std::pair<int, std::string> first{-1, ""};
  for (const auto& [text, calls] : signatures.items()) {
    if (text == expected || !calls.is_array()) {
      continue;
    }
    for (const auto& call : calls) {
      if (call.is_number_integer() && (first.first < 0 || call.get<int>() < first.first)) {
        first = {call.get<int>(), text};
      }
    }
  }
  return first;
}

} // namespace

std::filesystem::path samples_file(const std::filesystem::path& outputs_dir, int block) {
  return outputs_dir / fmt::format("timed_{}.samples.safetensors", block);
}

BlockSamples block_samples(const nlohmann::json& answer, std::filesystem::path file) {
  BlockSamples samples;
  samples.file = std::move(file);
  if (const auto it = answer.find("signatures"); it != answer.end() && it->is_object()) {
    samples.signatures = *it;
  }
  return samples;
}

std::string check_timed_outputs(const BlockSamples& candidate, const BlockSamples& reference,
                                int block, int first_call,
                                const compare::ToleranceOverride& tolerance) {
  const auto call_name = [&](int call) {
    return fmt::format("timed call {} (call {} of block {})", first_call + call, call, block);
  };
  const std::string expected = single_signature(reference.signatures);
  if (expected.empty()) {
    return fmt::format("the reference's timed outputs changed shape within block {} ({}); "
                       "they cannot be checked",
                       block, reference.signatures.dump());
  }
  if (const auto [call, other] = first_other_signature(candidate.signatures, expected);
      call >= 0) {
    return fmt::format("{} returned {}, the reference {}", call_name(call), other, expected);
  }
  if (candidate.signatures.empty()) {
    return fmt::format("the candidate's process reported no outputs for block {}", block);
  }
  compare::TensorFile theirs, ours;
  try {
    ours = compare::read_safetensors(reference.file);
  } catch (const compare::TensorFileError& error) {
    return fmt::format("the reference's samples of block {} are unreadable: {}", block,
                       error.what());
  }
  try {
    theirs = compare::read_safetensors(candidate.file);
  } catch (const compare::TensorFileError& error) {
    return fmt::format("the candidate's samples of block {} are unreadable: {}", block,
                       error.what());
  }
  for (const auto& [name, expected_values] : ours.tensors) {
    const auto found = theirs.tensors.find(name);
    if (found == theirs.tensors.end()) {
      return fmt::format("the candidate's samples of block {} lack {}", block, name);
    }
    const Tolerance rule = compare::tolerance_for(expected_values.dtype, tolerance);
    const TensorComparison comparison =
        compare::compare_tensors(found->second, expected_values, rule);
    if (comparison.passed) {
      continue;
    }
    if (comparison.first_mismatches.empty() || comparison.first_mismatches[0].index.empty()) {
      return fmt::format("block {}, {}: {}", block, name, comparison.failure);
    }
    // Rows are calls: [calls, sampled elements].
    const Mismatch& first = comparison.first_mismatches[0];
    const auto row = static_cast<int>(first.index[0]);
    return fmt::format("{}: {} differs from the reference's for the same inputs at sampled "
                       "element {} (candidate {:.6g}, reference {:.6g}, atol={:g} rtol={:g}); "
                       "{} of {} sampled elements of the block differ",
                       call_name(row), name, first.index.size() > 1 ? first.index[1] : 0,
                       first.candidate, first.reference, comparison.tolerance.atol,
                       comparison.tolerance.rtol, comparison.mismatches, comparison.numel);
  }
  return {};
}

} // namespace kbench
