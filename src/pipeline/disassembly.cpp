#include "pipeline/disassembly.hpp"

#include "core/source_files.hpp"
#include "pipeline/environment.hpp"
#include "pipeline/header_cache.hpp"
#include "pipeline/worker_phase.hpp"
#include "pipeline/worker_requests.hpp"
#include "sched/device_probe.hpp"
#include "sched/paths.hpp"
#include "sched/scratch_directory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <regex>
#include <sstream>

namespace kbench {
namespace fs = std::filesystem;

namespace {

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : mangled;
}

// The identifier a demangled kernel name starts with: "relu_kernel" of
// "relu_kernel(float const*, float*, long)" or of "void ns::relu_kernel<4>(...)".
std::string identifier(const std::string& name) {
  std::string head = name.substr(0, name.find('('));
  head = head.substr(0, head.find('<'));
  const auto space = head.rfind(' ');
  head = space == std::string::npos ? head : head.substr(space + 1);
  const auto scope = head.rfind("::");
  return scope == std::string::npos ? head : head.substr(scope + 2);
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// A tool's standard output (stderr folded in) and its exit status.
std::pair<std::string, int> run_tool(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) {
    return {"could not start: " + command, -1};
  }
  std::array<char, 4096> buffer{};
  while (const std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) {
    output.append(buffer.data(), n);
  }
  return {output, pclose(pipe)};
}

// "9.0" or "sm_90" -> the device whose architecture the build targets.
std::optional<sched::GpuInfo> gpu_for_arch(const std::string& arch) {
  std::smatch match;
  static const std::regex dotted(R"((\d+)\.(\d+))"), sm(R"(sm_(\d+)(\d))");
  if (!std::regex_match(arch, match, dotted) && !std::regex_match(arch, match, sm)) {
    return std::nullopt;
  }
  sched::GpuInfo gpu;
  gpu.cc_major = std::stoi(match[1]);
  gpu.cc_minor = std::stoi(match[2]);
  gpu.name = "sm_" + std::string(match[1]) + std::string(match[2]);
  return gpu;
}

fs::path extensions_dir_for(const DisassembleOptions& options, const std::string& source,
                            const std::string& arch) {
  return sched::extension_build_directory(options.cache_dir, source,
                                          fmt::format("\n--disassemble --arch={}\n--python={}\n{}",
                                                      arch, options.python.string(),
                                                      worker_user_build_setting()));
}

// Builds the candidate in a compile worker whose scratch directory goes with the build, however
// it ends; the extensions stay in the cache for cuobjdump.
PhaseOutcome build(const DisassembleOptions& options, const SourceFile& source,
                   const sched::GpuInfo& gpu, const fs::path& extensions) {
  const auto scratch = sched::ScratchDirectory::create("kbench-disassemble");
  fs::create_directories(extensions);
  fs::create_directories(scratch / "compile");
  fs::create_directories(scratch / "tmp");
  DeviceChoice choice;
  choice.device = "cuda:0";
  choice.device_name = gpu.name;
  choice.gpu = gpu;
  WorkerLaunch launch =
      worker_launch_for(WorkerRole::compile, choice, 0, scratch / "compile", scratch / "tmp",
                        options.python, 64 * 1024, scratch.path(), extensions);
  launch.limits.cpu_seconds = cpu_seconds_limit(options.compile_timeout);
  const auto host_pch = host_pch_root(options.cache_dir);
  const bool offered = host_pch && offer_host_pch(launch, WorkerRole::compile, *host_pch);
  if (const auto aten = aten_subset_root(options.cache_dir)) {
    offer_aten_subset(launch, WorkerRole::compile, *aten, options.python);
  }
  must_read_sources(launch, {}, source.path);
  auto worker = launch_worker(launch);
  const PhaseOutcome built =
      run_phase(*worker, requests::compile(source.path, extensions), options.compile_timeout,
                WorkerRole::compile, "importing and building the candidate", source.path.string());
  worker->shutdown();
  if (offered && built.ok) {
    build_host_pch_requests(*host_pch, options.python, extensions);
  }
  return built;
}

} // namespace

std::vector<SassFunction> parse_cuobjdump_sass(const std::string& text) {
  std::vector<SassFunction> functions;
  std::istringstream lines(text);
  std::string arch;
  bool inside = false;
  static const std::regex function(R"(^\s*Function\s*:\s*(\S+))"), code(R"(code for (sm_\w+))"),
      end(R"(^\s*\.{5,}\s*$)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, code)) {
      arch = match[1];
      inside = false;
    } else if (std::regex_search(line, match, function)) {
      functions.push_back({match[1], demangle(match[1]), arch, "", ""});
      inside = true;
    } else if (inside && std::regex_match(line, end)) {
      inside = false;
    } else if (inside) {
      functions.back().sass += line + "\n";
    }
  }
  return functions;
}

std::optional<fs::path> find_cuobjdump(const fs::path& python, std::string& why_not) {
  if (const char* set = std::getenv("KBENCH_CUOBJDUMP"); set && *set) {
    if (fs::exists(set)) {
      return fs::path(set);
    }
    why_not = fmt::format("KBENCH_CUOBJDUMP={} does not exist", set);
    return std::nullopt;
  }
  std::istringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  std::vector<fs::path> candidates;
  for (std::string dir; std::getline(path, dir, ':');) {
    if (!dir.empty()) {
      candidates.push_back(fs::path(dir) / "cuobjdump");
    }
  }
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  // The nvidia-cuda-cuobjdump wheel: <env>/lib/pythonX.Y/site-packages/nvidia/cu13/bin.
  std::error_code ignored;
  const fs::path lib = python.parent_path().parent_path() / "lib";
  for (const auto& entry : fs::directory_iterator(lib, ignored)) {
    for (const char* cuda : {"cu13", "cu12"}) {
      candidates.push_back(entry.path() / "site-packages" / "nvidia" / cuda / "bin" / "cuobjdump");
    }
  }
  for (const auto& candidate : candidates) {
    if (fs::exists(candidate, ignored)) {
      return candidate;
    }
  }
  why_not = "cuobjdump was not found (not on PATH, not in /usr/local/cuda/bin, not in the Python "
            "environment): install the CUDA toolkit or `pip install nvidia-cuda-cuobjdump`, or "
            "set KBENCH_CUOBJDUMP";
  return std::nullopt;
}

Disassembly disassemble(const DisassembleOptions& options) {
  Disassembly out;
  std::string error;
  const auto source = read_source_file(options.candidate, "candidate", error);
  if (!source) {
    out.error = error;
    return out;
  }
  std::optional<sched::GpuInfo> gpu;
  if (!options.arch.empty()) {
    gpu = gpu_for_arch(options.arch);
    if (!gpu) {
      out.error =
          fmt::format("--arch {}: give a compute capability such as 9.0 or sm_90", options.arch);
      return out;
    }
  } else {
    const auto& probe = sched::probe_devices();
    if (probe.gpus.empty()) {
      out.error = "no GPU to take the architecture from (" + probe.unavailable_reason +
                  "): pass --arch, for example --arch 9.0 for an H100 or H200";
      return out;
    }
    gpu = probe.gpus.front();
  }
  out.arch = gpu->arch_list_entry();
  const fs::path python = interpreter_of(options.python);
  const auto cuobjdump = find_cuobjdump(python, error);
  if (!cuobjdump) {
    out.error = error;
    return out;
  }
  out.tool = cuobjdump->string();

  // The build, as an evaluation's compile phase does it: the compile worker, GPU hidden.
  const fs::path extensions = extensions_dir_for(options, source->text, out.arch);
  const PhaseOutcome built = build(options, *source, *gpu, extensions);
  if (!built.ok) {
    out.error = "the candidate did not build: " + built.message;
    return out;
  }
  std::error_code ignored;
  out.own_kernels = built.body.value("own_kernels", std::vector<std::string>{});
  const fs::path built_dir = built.body.value("extensions_dir", extensions.string());
  for (const auto& entry : fs::recursive_directory_iterator(built_dir, ignored)) {
    if (entry.path().extension() != ".so") {
      continue;
    }
    // cuobjdump runs nvdisasm, which the toolkit and the wheels keep beside it.
    const auto [listing, status] =
        run_tool("PATH=" + shell_quote(cuobjdump->parent_path().string()) + ":\"$PATH\" " +
                 shell_quote(out.tool) + " -sass " + shell_quote(entry.path().string()));
    if (status != 0) {
      out.error = fmt::format("cuobjdump failed on {}: {}", entry.path().string(), listing);
      return out;
    }
    for (auto& function : parse_cuobjdump_sass(listing)) {
      const bool own = std::find(out.own_kernels.begin(), out.own_kernels.end(),
                                 identifier(function.name)) != out.own_kernels.end();
      if (own || options.all_functions) {
        function.library = entry.path().string();
        out.functions.push_back(std::move(function));
      }
    }
  }
  if (out.functions.empty()) {
    out.error = out.own_kernels.empty()
                    ? "the candidate defines no __global__ or @triton.jit kernel of its own"
                    : fmt::format("no SASS for the candidate's kernels ({}) in its build: Triton "
                                  "kernels are compiled on their first call, on a GPU, and are "
                                  "not in the build",
                                  fmt::join(out.own_kernels, ", "));
    return out;
  }
  out.ok = true;
  return out;
}

} // namespace kbench
