#pragma once
// kbench's own helpers that need not hold up the evaluation that asked for them (the host
// compile's precompiled headers, pipeline/header_cache.hpp): run one at a time, in the order
// asked, on a thread of their own, each under its deadline. The process waits for those asked
// for before it exits (wait_for_background_helpers, from main), so none outlives kbench.
#include "sched/helper_command.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace kbench::sched {

// Queues `argv` (run_helper's arguments); `done`, when given, gets the outcome on the helpers'
// thread.
void run_helper_in_background(std::vector<std::string> argv, std::vector<std::string> environment,
                              std::chrono::milliseconds deadline,
                              std::function<void(const HelperOutcome&)> done = {});

// Waits until every queued helper has ended. Returns how many ran since the process started.
int wait_for_background_helpers();

// How many queued helpers have not ended yet (the one running included).
int unfinished_background_helpers();

} // namespace kbench::sched
