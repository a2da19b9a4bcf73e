#pragma once
// The human summary's "label      value" layout, shared by the evaluation's lines and the
// counters' lines so that they stay aligned.
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace kbench::report {

inline void append_summary_line(std::string& out, std::string_view label, std::string_view value) {
  out += fmt::format("{:<11} {}\n", label, value);
}

} // namespace kbench::report
