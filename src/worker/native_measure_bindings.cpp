// The timing loop calls these around every timed call, so the common path is one call after
// the call: summarize_call() flushes CUPTI and summarises in C++, and only the summary crosses
// into Python. The records of the latest flush stay in C++ for a second look.
#include "worker/native_measure_bindings.hpp"

#include "measure/activity_summary.hpp"
#include "measure/cupti_tracer.hpp"
#include "measure/nvml_clocks.hpp"

#include <nlohmann/json.hpp>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace kbench::worker {
namespace {

using measure::ActivityRecord;
using measure::CuptiTracer;

// The records of the latest flush (cupti_flush or summarize_call(flush=True)). Only touched
// with the GIL held.
std::vector<ActivityRecord>& latest_records() {
  static std::vector<ActivityRecord> records;
  return records;
}

measure::NvmlClocks& nvml() {
  static measure::NvmlClocks clocks;
  return clocks;
}

void flush_into_latest() {
  std::vector<ActivityRecord> records;
  {
    // CUPTI's flush can wait for its worker thread; Python threads may run meanwhile.
    py::gil_scoped_release release;
    records = CuptiTracer::instance().flush();
  }
  latest_records() = std::move(records);
}

py::object to_python(const nlohmann::json& value) {
  switch (value.type()) {
  case nlohmann::json::value_t::null:
    return py::none();
  case nlohmann::json::value_t::boolean:
    return py::bool_(value.get<bool>());
  case nlohmann::json::value_t::number_unsigned:
    return py::int_(value.get<std::uint64_t>());
  case nlohmann::json::value_t::number_integer:
    return py::int_(value.get<std::int64_t>());
  case nlohmann::json::value_t::number_float:
    return py::float_(value.get<double>());
  case nlohmann::json::value_t::string:
    return py::str(value.get_ref<const std::string&>());
  case nlohmann::json::value_t::array: {
    py::list list;
    for (const auto& item : value) {
      list.append(to_python(item));
    }
    return list;
  }
  case nlohmann::json::value_t::object: {
    py::dict dict;
    for (const auto& [key, item] : value.items()) {
      dict[py::str(key)] = to_python(item);
    }
    return dict;
  }
  default:
    return py::none();
  }
}

// Tuples, not dicts: a timed call can produce thousands of records.
py::tuple record_tuple(const ActivityRecord& r) {
  return py::make_tuple(std::string(measure::kind_name(r.kind)), r.name, r.mangled, r.start_ns,
                        r.end_ns, r.device_id, r.context_id, r.stream_id, r.correlation_id, r.bytes,
                        py::make_tuple(r.grid[0], r.grid[1], r.grid[2]),
                        py::make_tuple(r.block[0], r.block[1], r.block[2]), r.registers_per_thread,
                        r.static_shared_bytes, r.dynamic_shared_bytes);
}

template <typename T>
py::object optional_to_python(const std::optional<T>& value) {
  return value ? py::object(py::int_(*value)) : py::object(py::none());
}

} // namespace

void bind_measure_module(py::module_& module) {
  module.attr("CUPTI_INVALID_STREAM_ID") = CuptiTracer::kInvalidStreamId;
  module.attr("CUPTI_RECORD_FIELDS") =
      py::make_tuple("kind", "name", "mangled", "start_ns", "end_ns", "device_id", "context_id",
                     "stream_id", "correlation_id", "bytes", "grid", "block",
                     "registers_per_thread", "static_shared_bytes", "dynamic_shared_bytes");

  module.def(
      "cupti_load", [] { return CuptiTracer::instance().load(); },
      "Load CUPTI once: '' when ready, else a reason starting with 'unsupported: '");
  module.def(
      "cupti_start", [] { return CuptiTracer::instance().start(); },
      "Enable kernel, copy, set and allocation records: '' or the reason");
  module.def(
      "cupti_stop", [] { CuptiTracer::instance().stop(); },
      "Disable the records; what completed stays for the next flush");
  module.def(
      "cupti_started", [] { return CuptiTracer::instance().started(); },
      "Whether the records are enabled (between cupti_start and cupti_stop)");
  module.def(
      "cupti_flush",
      [] {
        flush_into_latest();
        py::list out;
        for (const ActivityRecord& r : latest_records()) {
          out.append(record_tuple(r));
        }
        return out;
      },
      "Every record completed since the previous flush, as tuples laid out like "
      "CUPTI_RECORD_FIELDS. Synchronise the device first: unfinished work comes back untimed");
  module.def(
      "cupti_timestamp_ns", [] { return CuptiTracer::instance().timestamp_ns(); },
      "CUPTI's clock in ns, the one records use; 0 when CUPTI is not loaded");
  module.def(
      "cupti_stream_id",
      [](std::uintptr_t context, std::uintptr_t stream) {
        return CuptiTracer::instance().stream_id(context, stream);
      },
      py::arg("context"), py::arg("stream"),
      "CUPTI id of a CUstream handle (torch.cuda.Stream.cuda_stream; 0 = legacy default, "
      "1 = CU_STREAM_LEGACY, 2 = CU_STREAM_PER_THREAD); CUPTI_INVALID_STREAM_ID when unknown");
  module.def(
      "cupti_notes", [] { return CuptiTracer::instance().notes(); },
      "What degraded without failing");
  module.def(
      "cupti_dropped_records", [] { return CuptiTracer::instance().dropped_records(); },
      "Records CUPTI dropped for want of buffer space since start");
  module.def(
      "cupti_library_path", [] { return CuptiTracer::instance().library_path(); },
      "The libcupti that was loaded; '' when none");
  module.def(
      "summarize_call",
      [](std::uint64_t window_start_ns, std::uint64_t window_end_ns, std::uint32_t caller_stream_id,
         const std::vector<std::string>& own_kernel_names, bool flush,
         std::optional<std::uint32_t> legacy_stream_id,
         std::optional<std::uint64_t> caller_done_ns) {
        if (flush) {
          flush_into_latest();
        }
        nlohmann::json summary =
            measure::summarize_call(latest_records(), window_start_ns, window_end_ns,
                                    caller_stream_id, own_kernel_names, legacy_stream_id,
                                    caller_done_ns)
                .to_json();
        summary["records_flushed"] = latest_records().size();
        summary["dropped_records"] = CuptiTracer::instance().dropped_records();
        return to_python(summary);
      },
      py::arg("window_start_ns"), py::arg("window_end_ns"), py::arg("caller_stream_id"),
      py::arg("own_kernel_names") = std::vector<std::string>{}, py::arg("flush") = true,
      py::arg("legacy_stream_id") = py::none(), py::arg("caller_done_ns") = py::none(),
      "Summary (dict) of the GPU work between two cupti_timestamp_ns() readings. flush=True "
      "flushes CUPTI first and summarises what it returned; flush=False summarises the latest "
      "flush again. legacy_stream_id: CUPTI's id of the legacy default stream (Tracer finds it "
      "with a probe kernel; cuptiGetStreamIdEx does not resolve the legacy handle). "
      "caller_done_ns: cupti_timestamp_ns() read once an event recorded on the caller's stream "
      "right after the call returned had completed; work on other streams ending after it is "
      "unjoined_stream_work (without it, measured from the caller stream's last work)");

  module.def(
      "nvml_load", [](const std::string& pci_bus_id) { return nvml().load(pci_bus_id); },
      py::arg("pci_bus_id"),
      "Find the GPU at this PCI bus id ('0000:19:00.0'): '' or a reason starting with "
      "'unsupported: '");
  module.def(
      "nvml_read",
      [] {
        const measure::ClockReading r = nvml().read();
        py::dict out;
        out["sm_mhz"] = r.sm_mhz;
        out["mem_mhz"] = r.mem_mhz;
        out["throttle_reasons"] = r.throttle_reasons;
        out["throttle_reason_names"] = r.throttle_reason_names;
        out["power_mw"] = optional_to_python(r.power_mw);
        out["error"] = r.error;
        return out;
      },
      "Current SM and memory clocks, throttle reasons and power; 'error' is '' on success");
  module.def(
      "nvml_limits",
      [] {
        const measure::ClockLimits l = nvml().limits();
        py::dict out;
        out["default_sm_mhz"] = optional_to_python(l.default_sm_mhz);
        out["max_sm_mhz"] = optional_to_python(l.max_sm_mhz);
        out["max_mem_mhz"] = optional_to_python(l.max_mem_mhz);
        return out;
      },
      "Default (applications) SM clock and maximum clocks; None where the device does not say");
  module.def(
      "nvml_energy_mj", [] { return optional_to_python(nvml().energy_mj()); },
      "Energy since the driver loaded, in mJ; None when unsupported or not loaded");
}

} // namespace kbench::worker
