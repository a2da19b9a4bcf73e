#pragma once
// Nsight Compute's raw CSV page (`ncu --csv --page raw --print-units base --log-file F`) read
// into one record per profiled kernel. The file starts with ncu's own "==PROF==" lines, then a
// header row of metric names, a row of units, and a row per kernel; numbers carry thousands
// separators ("1,504").
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kbench::counters {

struct NcuKernel {
  std::string name;                         // "Kernel Name" as ncu prints it (demangled)
  std::map<std::string, double> values;     // every numeric metric, in the printed (base) unit
  std::map<std::string, std::string> units; // metric -> unit ("byte", "%", "ns"; "" for none)
  std::map<std::string, std::string> text;  // the non-numeric cells ("(128, 1, 1)", "n/a")

  // The value of a metric, or nullptr when ncu did not report it (or not as a number).
  const double* find(const std::string& metric) const;
};

struct NcuReport {
  std::vector<NcuKernel> kernels;
  std::vector<std::string> messages; // ncu's own lines: "==PROF==", "==WARNING==", "==ERROR==" and
                                     // bare sentences before the table
};

// Throws std::runtime_error naming the line when the table is malformed (a row whose cell count
// differs from the header's). A file without a table (nothing profiled) gives no kernels.
NcuReport parse_ncu_csv(std::string_view text);

} // namespace kbench::counters
