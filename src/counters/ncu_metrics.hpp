#pragma once
// What kbench asks Nsight Compute for: the metric list (src/counters/ncu_metrics.txt, compiled
// in) by profile set, where ncu is, and its command line.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kbench::counters {

const std::vector<std::string>& profile_sets(); // "sol", "full"
// The metrics (and `regex:` patterns) of a set, in file order; throws for an unknown set.
std::vector<std::string> metrics_for_set(const std::string& set);
// Whether `set` collects a metric whose list entry starts with `name` (a metric name, or the
// start of a `regex:` pattern).
bool collected_by(std::string_view name, const std::string& set);
// KBENCH_NCU, else `ncu` on PATH, else /usr/local/cuda/bin/ncu; empty with `why_not` set.
std::optional<std::filesystem::path> find_ncu(std::string& why_not);
inline constexpr const char* kNvidiaDriverParams = "/proc/driver/nvidia/params";
// Why reading GPU performance counters needs an administrator on this machine (the driver's
// RmProfilingAdminOnly, 1 by default), or none: a root kbench then keeps its Nsight Compute
// workers as root (src/pipeline/worker_phase.cpp). The first form reads the driver's parameter
// file's text.
std::optional<std::string> counters_need_admin(const std::string& driver_params);
std::optional<std::string> counters_need_admin();
// ncu's arguments before the profiled program's: only the span between the program's
// cudaProfilerStart and Stop, the set's metrics, the raw CSV page in base units into
// `log_file`. Clocks locked to base and caches flushed between passes (ncu's defaults).
std::vector<std::string> ncu_arguments(const std::filesystem::path& ncu, const std::string& set,
                                       const std::filesystem::path& log_file);

} // namespace kbench::counters
