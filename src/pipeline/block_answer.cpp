#include "pipeline/block_answer.hpp"

#include "core/json_io.hpp"

namespace kbench {
namespace {

std::optional<double> optional_number(const nlohmann::json& value) {
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

std::vector<double> clock_readings(const nlohmann::json& body, const char* key) {
  std::vector<double> readings;
  for (const auto& mhz : body.value(key, nlohmann::json::array())) {
    if (mhz.is_number()) {
      readings.push_back(mhz.get<double>());
    }
  }
  return readings;
}

CallFacts call_facts(const nlohmann::json& facts) {
  CallFacts call;
  call.kernel_count = facts.value("kernel_count", 0);
  call.copy_count = facts.value("copy_count", 0);
  call.set_count = facts.value("set_count", 0);
  call.kernel_us = facts.value("kernel_us", 0.0);
  call.own_kernel_us = facts.value("own_kernel_us", 0.0);
  call.unjoined_stream_work = facts.value("unjoined_stream_work", false);
  call.unjoined_tail_us = facts.value("unjoined_tail_us", 0.0);
  call.kernels_by_name = facts.value("kernels_by_name", std::map<std::string, int>{});
  return call;
}

} // namespace

BlockAnswer parse_block(const nlohmann::json& body) {
  BlockAnswer answer;
  if (body.contains("setup")) {
    const auto& setup = body["setup"];
    answer.setup = SetupFacts{setup.value("tracing", ""),
                              optional_number(setup.value("tracing_overhead_us", nlohmann::json())),
                              optional_number(setup.value("default_sm_mhz", nlohmann::json())),
                              setup.value("l2_flush_bytes", 0) > 0,
                              setup.value("own_kernels", std::vector<std::string>{}),
                              setup.value("input_generation", ""),
                              setup.value("input_bytes", std::int64_t{0}),
                              setup.value("output_bytes", std::int64_t{0})};
  }
  if (body.contains("memory") && body["memory"].is_object()) {
    const auto& memory = body["memory"];
    if (memory.contains("allocator_peak_bytes")) {
      answer.peak_memory_bytes = memory["allocator_peak_bytes"].get<std::int64_t>();
    }
    if (memory.contains("raw_allocated_bytes")) {
      answer.raw_allocated_bytes = memory["raw_allocated_bytes"].get<std::int64_t>();
    }
  }
  if (body.contains("compile_s")) {
    answer.compile_s = optional_number(body["compile_s"]);
  }
  answer.method = body.value("method", "");
  answer.input_fingerprint = body.value("input_fingerprint", nlohmann::json());
  answer.sm_mhz = clock_readings(body, "sm_mhz");
  answer.mem_mhz = clock_readings(body, "mem_mhz");
  answer.clock_reasons = body.value("clock_reasons", std::vector<std::string>{});

  const auto host = number_array(body, "host_us");
  const auto device = body.contains("device_us") ? number_array(body, "device_us") : host;
  const auto facts = body.value("calls", nlohmann::json::array());
  answer.timed_calls = device.size();
  for (std::size_t i = 0; i < device.size(); ++i) {
    if (device[i] < 0 || (i < host.size() && host[i] < 0)) {
      continue;
    }
    TimedCall call{device[i], i < host.size() ? host[i] : device[i], std::nullopt};
    if (i < facts.size()) {
      call.facts = call_facts(facts[i]);
    }
    answer.calls.push_back(std::move(call));
  }
  return answer;
}

} // namespace kbench
