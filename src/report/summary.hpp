#pragma once
// The human summary of one evaluation, as `kbench eval` prints it.
#include "core/result.hpp"

#include <string>

namespace kbench::report {

// "812.4 µs", "12.35 ms", "1.203 s": always with its unit.
std::string format_duration_us(double microseconds);
std::string format_summary(const EvalResult& result);
// 0 ok; 1 the candidate failed (incorrect, rejected, errors, timeout, crash); 2 the harness or
// the machine could not evaluate (harness_error, unsupported).
int exit_code_for(Status status);

} // namespace kbench::report
