#pragma once
// The JSON form of the counters, as an evaluation stores it (`call` in core/result.hpp) and
// report/counters_summary.cpp reads it back: a field is its value (a number, or a word for the
// categorical ones) with its unit, or null with the reason. Declared over forward declarations
// so that kernel_counters.hpp can include it and every user of the counters can write them.
#include <nlohmann/json_fwd.hpp>

namespace kbench::counters {

struct CounterField;
struct KernelCounters;
struct CallCounters;

nlohmann::json to_json(const CounterField& field);
nlohmann::json to_json(const KernelCounters& kernel);
nlohmann::json to_json(const CallCounters& call);

} // namespace kbench::counters
