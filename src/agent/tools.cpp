#include "agent/tools.hpp"

#include "core/json_io.hpp"
#include "core/sha256.hpp"
#include "counters/gpu_specs.hpp"
#include "pipeline/disassembly.hpp"
#include "pipeline/result_key.hpp"
#include "pipeline/static_check.hpp"
#include "pipeline/worker_phase.hpp"
#include "report/specs_summary.hpp"
#include "sched/device_probe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <sys/stat.h>

namespace kbench::agent {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxKernelBytes = 1 << 20;
constexpr std::size_t kMaxSassChars = 20000;

nlohmann::json code_parameters() {
  return {
      {"type", "object"},
      {"properties",
       {{"kernel_code",
         {{"type", "string"},
          {"description", "The whole candidate file: Python source defining class ModelNew"}}}}},
      {"required", {"kernel_code"}}};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ToolOutcome error_outcome(std::string text) {
  ToolOutcome out;
  out.text = "error: " + std::move(text);
  return out;
}

// The kernel as a file in the run's folder, named by its sha256 (readable by the workers' user).
fs::path write_kernel(const fs::path& workspace, const std::string& code, const std::string& sha) {
  std::error_code ignored;
  fs::create_directories(workspace, ignored);
  ::chmod(workspace.c_str(), 0755);
  const fs::path file = workspace / fmt::format("kernel_{}.py", sha.substr(0, 16));
  if (!fs::exists(file, ignored)) {
    write_file_atomically(file, code,
                          fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
  }
  return file;
}

} // namespace

Tier tier_named(const std::string& name) {
  if (name == "single") {
    return {"single", 1, 1, {"submit_kernel"}};
  }
  if (name == "default") {
    return {
        "default",
        10,
        30,
        {"compile_kernel", "run_correctness", "static_check", "get_gpu_specs", "submit_kernel"}};
  }
  if (name == "all") {
    return {"all",
            15,
            50,
            {"compile_kernel", "run_correctness", "static_check", "get_gpu_specs", "profile_kernel",
             "disassemble_kernel", "submit_kernel"}};
  }
  throw std::invalid_argument(
      fmt::format("--tier {}: the tiers are single, default and all (docs/agent.md)", name));
}

const std::vector<ToolSpec>& all_tool_specs() {
  static const std::vector<ToolSpec> specs = {
      {"compile_kernel",
       "Builds the kernel file as the evaluation would (load_inline and the like) after the "
       "static check. Returns the build's outcome: the compiler's first errors, or how long it "
       "took and any static-check warnings.",
       code_parameters()},
      {"run_correctness",
       "Runs the kernel against the reference on seeded trials (no timing). Returns how many "
       "passed and the largest errors, or what failed.",
       code_parameters()},
      {"static_check",
       "Runs the static rules over the kernel file without building it (fallbacks to PyTorch, "
       "patching, threads, a missing kernel, ...). Returns each verdict with its line.",
       code_parameters()},
      {"get_gpu_specs",
       "The GPU's peak figures: SMs, L2, clocks, DRAM bandwidth, dense TFLOP/s per precision.",
       {{"type", "object"}, {"properties", nlohmann::json::object()}}},
      {"profile_kernel",
       "Correctness, then the kernel's timing (device time per call, host latency, launches, "
       "memory) and, on a GPU, its hardware counters (speed of light, occupancy, bottleneck).",
       code_parameters()},
      {"disassemble_kernel", "The SASS of the kernel's own __global__ functions.",
       code_parameters()},
      {"submit_kernel",
       "The final evaluation of the kernel: correctness, timing and counters. Ends the session: "
       "call it once, with your best correct kernel.",
       code_parameters()},
  };
  return specs;
}

ToolBox::ToolBox(ToolContext context, const std::vector<std::string>& tools)
    : m_context(std::move(context)) {
  for (const auto& spec : all_tool_specs()) {
    if (std::find(tools.begin(), tools.end(), spec.name) != tools.end()) {
      m_specs.push_back(spec);
    }
  }
}

ToolOutcome ToolBox::call(const ToolCall& call) {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](ToolOutcome out) {
    out.seconds = seconds_since(start);
    return out;
  };
  const bool offered = std::any_of(m_specs.begin(), m_specs.end(),
                                   [&](const ToolSpec& spec) { return spec.name == call.name; });
  if (!offered) {
    std::vector<std::string> names;
    for (const auto& spec : m_specs) {
      names.push_back(spec.name);
    }
    return finish(error_outcome(fmt::format("there is no tool {:?}; the tools are: {}", call.name,
                                            fmt::join(names, ", "))));
  }
  const auto arguments =
      nlohmann::json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr, false);
  if (arguments.is_discarded() || !arguments.is_object()) {
    return finish(error_outcome(fmt::format(
        "the arguments of {} are not a JSON object ({}); call it again with "
        "{{\"kernel_code\": \"<the whole file>\"}}",
        call.name,
        call.arguments.size() > 200 ? call.arguments.substr(0, 200) + "..." : call.arguments)));
  }
  if (call.name == "get_gpu_specs") {
    return finish(run(call.name, ""));
  }
  const auto code = arguments.find("kernel_code");
  if (code == arguments.end() || !code->is_string() || code->get<std::string>().empty()) {
    return finish(error_outcome(
        fmt::format("{} needs \"kernel_code\": the whole candidate file as a string", call.name)));
  }
  if (code->get<std::string>().size() > kMaxKernelBytes) {
    return finish(error_outcome(fmt::format("kernel_code is {} bytes, over the limit of {}",
                                            code->get<std::string>().size(), kMaxKernelBytes)));
  }
  try {
    return finish(run(call.name, code->get<std::string>()));
  } catch (
      const std::exception& error) { // kbench's own failure: the model is told, the run goes on
    return finish(
        error_outcome(std::string("the harness could not run the tool: ") + error.what()));
  }
}

ToolOutcome ToolBox::run(const std::string& tool, const std::string& code) {
  if (tool == "get_gpu_specs") {
    ToolOutcome out;
    out.ok = true;
    const auto& gpus = sched::probe_devices().gpus;
    const DeviceChoice choice = choose_device(m_context.evaluation.device, 0);
    if (choice.device == "cpu" || gpus.empty()) {
      out.text = "get_gpu_specs: this run evaluates on the CPU; no GPU figures apply.";
    } else {
      out.text = "get_gpu_specs:\n" + report::format_specs(counters::resolve_specs(gpus.front()));
    }
    return out;
  }
  const std::string sha = sha256_hex(code);
  const fs::path kernel = write_kernel(m_context.workspace, code, sha);
  if (tool == "static_check") {
    const auto checked = check_alone(
        kernel, m_context.evaluation.backend, m_context.evaluation.problem,
        m_context.evaluation.rules.empty() ? std::nullopt
                                           : std::optional<fs::path>(m_context.evaluation.rules),
        m_context.evaluation.python);
    ToolOutcome out;
    out.kernel_sha256 = sha;
    out.kernel_path = kernel.string();
    out.ok = checked.phase.ok && rejections(checked.verdicts).empty();
    out.text = checked.phase.ok ? static_check_text(checked.verdicts)
                                : "static_check: could not run: " + checked.phase.message;
    return out;
  }
  if (tool == "disassemble_kernel") {
    DisassembleOptions options;
    options.candidate = kernel;
    options.python = m_context.evaluation.python;
    options.cache_dir = m_context.evaluation.cache_dir;
    const Disassembly sass = disassemble(options);
    ToolOutcome out;
    out.kernel_sha256 = sha;
    out.kernel_path = kernel.string();
    out.ok = sass.ok;
    if (!sass.ok) {
      out.text = "disassemble_kernel: " + sass.error;
      return out;
    }
    out.text =
        fmt::format("disassemble_kernel: {} function(s), {}\n", sass.functions.size(), sass.arch);
    for (const auto& function : sass.functions) {
      out.text += fmt::format("== {} ({})\n{}\n", function.name, function.arch, function.sass);
    }
    if (out.text.size() > kMaxSassChars) {
      out.text = out.text.substr(0, kMaxSassChars) + "\n... (cut: the listing is longer)";
    }
    return out;
  }
  EvalOptions options = m_context.evaluation;
  if (tool == "compile_kernel") {
    options.compile_only = true;
  } else if (tool == "run_correctness") {
    options.no_timing = true;
  } else if (tool == "profile_kernel" || tool == "submit_kernel") {
    const DeviceChoice choice = choose_device(options.device, options.gpu);
    if (choice.device != "cpu" && options.profile.empty()) {
      options.profile = "sol";
    }
  }
  return evaluated(tool, options, kernel, sha);
}

ToolOutcome ToolBox::evaluated(const std::string& tool, EvalOptions options, const fs::path& kernel,
                               const std::string& sha) {
  options.candidate = kernel;
  EvalResult result = m_context.gate->evaluate(options, m_context.run_index);
  ToolOutcome out;
  out.kernel_sha256 = sha;
  out.kernel_path = kernel.string();
  out.ok = result.status == Status::ok;
  out.compiled = result.compile.ran && result.compile.first_error.empty() &&
                 result.status != Status::compile_error && result.status != Status::static_rejected;
  if (result.device != "cpu" && !options.compile_only) {
    out.gpu_seconds = std::max(0.0, result.wall_s - result.compile.seconds);
  }
  if (m_context.store) {
    out.evaluation_id =
        m_context.store->add_evaluation(result, store_key(options).value_or(""), "agent");
  }
  if (tool == "compile_kernel") {
    out.text = compile_text(result);
  } else if (tool == "run_correctness" || tool == "held_out_check") {
    out.text = correctness_text(tool, result);
  } else {
    out.text = timing_text(tool, result, m_context.show_reference);
  }
  out.submitted = tool == "submit_kernel";
  out.result = std::move(result);
  return out;
}

ToolOutcome ToolBox::evaluate_final(const fs::path& kernel, const std::string& sha256) {
  EvalOptions options = m_context.evaluation;
  const DeviceChoice choice = choose_device(options.device, options.gpu);
  if (choice.device != "cpu" && options.profile.empty()) {
    options.profile = "sol";
  }
  return evaluated("final_evaluation", options, kernel, sha256);
}

ToolOutcome ToolBox::held_out_check(const fs::path& kernel, const std::string& sha256,
                                    std::uint64_t seed) {
  EvalOptions options = m_context.evaluation;
  options.no_timing = true;
  options.seed = seed;
  return evaluated("held_out_check", options, kernel, sha256);
}

} // namespace kbench::agent
