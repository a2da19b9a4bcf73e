#include "pipeline/worker_phase.hpp"

#include "core/seeding.hpp"
#include "core/stopwatch.hpp"
#include "counters/ncu_metrics.hpp"
#include "pipeline/environment.hpp"
#include "pipeline/reference_cache.hpp"
#include "pipeline/worker_requests.hpp"
#include "sandbox/landlock.hpp"
#include "sandbox/worker_user.hpp"
#include "sched/paths.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unistd.h>
#include <vector>

namespace kbench {

std::unique_ptr<sandbox::WorkerClient> launch_worker(const WorkerLaunch& launch) {
  sandbox::SpawnSpec spec;
  spec.argv = launch.wrapper;
  spec.argv.push_back(launch.worker.string());
  if (!launch.python.empty()) {
    spec.argv.push_back("--python");
    spec.argv.push_back(launch.python.string());
  }
  spec.working_directory = launch.working_directory;
  spec.sandbox = launch.sandbox;
  auto environment = launch.environment;
  if (!launch.wrapper.empty() && spec.sandbox.user) {
    // Nsight Compute reads the counters from inside the profiled process: where the driver
    // keeps them for administrators, that process must stay root.
    if (const auto admin_only = counters::counters_need_admin()) {
      spec.sandbox.user.reset();
      spec.sandbox.stays_root = "Nsight Compute's worker: " + *admin_only;
    }
  }
  if (!launch.wrapper.empty() && spec.sandbox.restrict_filesystem) {
    spec.sandbox.worker_confines_writes = true;
    nlohmann::json writable = nlohmann::json::array();
    for (const auto& w : spec.sandbox.writable) {
      writable.push_back(w.string());
    }
    environment[sandbox::kWorkerWritableVariable] = writable.dump();
    // Nsight Compute keeps its settings under $HOME and stops without a writable one.
    environment["HOME"] = launch.working_directory.string();
  }
  spec.environment = sandbox::to_envp(sandbox::worker_environment(environment));
  spec.limits = launch.limits;
  // Tensor files of any size are made by kbench at the worker's request, in the directories it
  // may write anyway (sandbox/transfer_files.hpp); never under /dev, which every worker writes.
  for (const auto& w : launch.sandbox.writable) {
    if (w != "/dev") {
      spec.transfer_roots.push_back(w);
    }
  }
  // Ranks of a collective evaluation rendezvous over 127.0.0.1 between separate workers; a
  // namespace each would cut them off from one another.
  if (const auto world = launch.environment.find("WORLD_SIZE");
      world != launch.environment.end() && std::atoi(world->second.c_str()) > 1) {
    spec.sandbox.allow_loopback_network = true;
  }
  // A wrapper is the program started, not the worker: such a worker is spawned.
  const bool fork = launch.wrapper.empty() && !spec.sandbox.worker_confines_writes;
  return std::make_unique<sandbox::WorkerClient>(spec, launch.output_keep_bytes, fork);
}

std::string worker_user_build_setting() {
  const auto user =
      sandbox::choose_worker_user(std::getenv(sandbox::kWorkerUserVariable), geteuid());
  return user.user ? fmt::format("--worker-uid={}\n", user.user->uid) : "";
}

void must_read_sources(WorkerLaunch& launch, const std::filesystem::path& problem,
                       const std::filesystem::path& candidate) {
  if (!problem.empty()) {
    launch.sandbox.must_reach.push_back({problem, R_OK, "the problem"});
  }
  if (!candidate.empty()) {
    launch.sandbox.must_reach.push_back({candidate, R_OK, "the candidate"});
  }
}

rlim_t worker_file_size_limit(const char* setting) {
  if (setting == nullptr || *setting == '\0') {
    return rlim_t{8} << 30;
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(setting, &end, 10);
  if (errno != 0 || end == setting || *end != '\0' || value == 0 || *setting == '-') {
    throw std::runtime_error(fmt::format(
        "KBENCH_WORKER_FSIZE_BYTES={}: give the workers' file-size limit as a positive number of "
        "bytes (unset: 8 GiB)",
        setting));
  }
  return static_cast<rlim_t>(value);
}

rlim_t cpu_seconds_limit(std::chrono::seconds deadlines) {
  const auto cores = std::max(1U, std::thread::hardware_concurrency());
  return static_cast<rlim_t>(std::max<std::int64_t>(60, 2 * deadlines.count())) * cores;
}

void record_protections(EvalResult& result, const std::vector<sandbox::Protection>& protections) {
  for (const auto& p : protections) {
    auto known = std::find_if(result.sandbox.begin(), result.sandbox.end(),
                              [&](const SandboxProtection& s) { return s.protection == p.name; });
    // One warning per protection and evaluation: for its first worker, or the first that
    // lacks it after others had it.
    bool warn = !p.warning.empty();
    if (known == result.sandbox.end()) {
      result.sandbox.push_back({p.name, p.active, p.detail});
    } else if (known->active && !p.active) {
      known->active = false;
      known->detail = p.detail;
    } else {
      warn = warn && known->active && known->detail != p.detail;
    }
    if (warn && std::find(result.warnings.begin(), result.warnings.end(), p.warning) ==
                    result.warnings.end()) {
      result.warnings.push_back(p.warning);
    }
  }
}

std::set<std::string> protections_turned_off(const char* setting) {
  static const std::set<std::string> all = {"network", "syscall_filter", "filesystem"};
  const std::string value = setting ? setting : "";
  if (value.empty() || value == "on") {
    return {};
  }
  if (value == "off") {
    return all;
  }
  if (!value.starts_with("off:")) {
    throw std::runtime_error(
        fmt::format("KBENCH_SANDBOX={}: use off, or off: and a comma-separated list of {}", value,
                    fmt::join(all, ", ")));
  }
  std::set<std::string> off;
  std::istringstream names(value.substr(4));
  for (std::string name; std::getline(names, name, ',');) {
    if (!all.contains(name)) {
      throw std::runtime_error(fmt::format("KBENCH_SANDBOX={}: unknown protection '{}' (known: {})",
                                           value, name, fmt::join(all, ", ")));
    }
    off.insert(name);
  }
  return off;
}

namespace {

// The deepest common ancestor of two paths, or empty when it is the root (too wide to be a
// scratch directory).
std::filesystem::path common_parent(const std::filesystem::path& a,
                                    const std::filesystem::path& b) {
  std::filesystem::path common;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end() && *i == *j; ++i, ++j) {
    common /= *i;
  }
  return std::distance(common.begin(), common.end()) <= 2 ? std::filesystem::path() : common;
}

// The GPUs the workers see: --gpu picks among the GPUs this process can see, so an outer
// CUDA_VISIBLE_DEVICES is respected rather than replaced. Several ranks see all the ranks'
// GPUs, as under torchrun, and each takes cuda:LOCAL_RANK.
std::string visible_devices_for(int first_gpu, int count) {
  std::vector<std::string> outer;
  if (const char* value = std::getenv("CUDA_VISIBLE_DEVICES"); value && *value) {
    std::stringstream list(value);
    for (std::string item; std::getline(list, item, ',');) {
      outer.push_back(item);
    }
  }
  std::string visible;
  for (int gpu = first_gpu; gpu < first_gpu + count; ++gpu) {
    const auto index = static_cast<std::size_t>(gpu);
    visible +=
        (visible.empty() ? "" : ",") + (index < outer.size() ? outer[index] : std::to_string(gpu));
  }
  return visible;
}

} // namespace

DeviceChoice choose_device(const std::string& wanted, int gpu_index, int world_size) {
  const auto& probe = sched::probe_devices();
  DeviceChoice choice;
  choice.world_size = world_size;
  const std::string device = wanted == "auto" ? (probe.gpus.empty() ? "cpu" : "cuda") : wanted;
  if (device == "cpu") {
    choice.device = choice.device_name = "cpu";
    return choice;
  }
  choice.device = "cuda";
  if (probe.gpus.empty()) {
    choice.unsupported =
        "--device cuda needs a GPU, and none is usable here: " + probe.unavailable_reason +
        ". Run with --device cpu, or on a machine with an NVIDIA GPU";
  } else if (gpu_index >= static_cast<int>(probe.gpus.size())) {
    choice.unsupported = fmt::format("--gpu {} does not exist: this machine shows {} GPU(s)",
                                     gpu_index, probe.gpus.size());
  } else if (gpu_index + world_size > static_cast<int>(probe.gpus.size())) {
    choice.unsupported = fmt::format(
        "world size {} needs {} GPUs from --gpu {} on, and this machine shows {}: run on a "
        "machine with more GPUs, or with --device cpu (gloo)",
        world_size, world_size, gpu_index, probe.gpus.size());
  } else {
    choice.gpu = probe.gpus[static_cast<std::size_t>(gpu_index)];
    choice.device = "cuda:0";
    choice.device_name = choice.gpu->name;
  }
  return choice;
}

WorkerLaunch worker_launch_for(WorkerRole role, const DeviceChoice& choice, int gpu_index,
                               const std::filesystem::path& working_directory,
                               const std::filesystem::path& tmp_directory,
                               const std::filesystem::path& python, std::size_t output_keep_bytes,
                               const std::filesystem::path& scratch,
                               const std::filesystem::path& extensions) {
  WorkerLaunch launch;
  launch.worker = sched::worker_executable();
  launch.python = python;
  launch.working_directory = working_directory;
  launch.output_keep_bytes = output_keep_bytes;
  auto& env = launch.environment;
  env["TMPDIR"] = tmp_directory.string();
  env["KBENCH_DEVICE"] = choice.device;
  env["CUDA_VISIBLE_DEVICES"] = "";
  if (choice.gpu) {
    env["TORCH_CUDA_ARCH_LIST"] = choice.gpu->arch_list_entry();
    if (role != WorkerRole::compile) {
      env["CUDA_VISIBLE_DEVICES"] = visible_devices_for(gpu_index, choice.world_size);
    }
  }
  // Triton's cache defaults to ~/.triton, which the worker may not write: it goes to TMPDIR, as
  // inductor's already does (a candidate cannot leave compiled kernels for a later evaluation).
  env["TRITON_CACHE_DIR"] = (tmp_directory / "triton").string();

  auto& policy = launch.sandbox;
  // KBENCH_SANDBOX=off is the way out on a machine where a protection breaks legitimate work;
  // `off:network,filesystem` turns off only those. Either is reported on every result, so
  // nobody mistakes such a run for a protected one.
  const auto off = protections_turned_off(std::getenv("KBENCH_SANDBOX"));
  policy.isolate_network = !off.contains("network");
  policy.filter_syscalls = !off.contains("syscall_filter");
  policy.restrict_filesystem = !off.contains("filesystem");
  if (!off.empty()) {
    policy.disabled_reason =
        fmt::format("turned off by KBENCH_SANDBOX={}", std::getenv("KBENCH_SANDBOX"));
  }
  const std::filesystem::path root =
      scratch.empty() ? common_parent(working_directory, tmp_directory) : scratch;
  const auto user =
      sandbox::choose_worker_user(std::getenv(sandbox::kWorkerUserVariable), geteuid());
  policy.user = user.user;
  policy.stays_root = user.stays_root;
  if (policy.user) {
    // Its own home and name: root's home is not the worker's to read or write (CUDA's JIT
    // cache and Nsight Compute's settings go beneath HOME).
    env["HOME"] = tmp_directory.string();
    env["USER"] = env["LOGNAME"] = policy.user->name;
    policy.handed_over = {working_directory, tmp_directory};
    if (!root.empty() && root != working_directory) {
      policy.handed_over_beneath.push_back(root);
    }
    if (role != WorkerRole::reference && !extensions.empty()) {
      policy.handed_over.push_back(extensions);
    }
    const std::filesystem::path interpreter = interpreter_of(python);
    policy.must_reach.push_back({interpreter, X_OK, "the Python interpreter"});
    const std::filesystem::path package = std::filesystem::path(KBENCH_SOURCE_DIR) / "python";
    if (std::filesystem::exists(package)) {
      policy.must_reach.push_back({package, R_OK | X_OK, "kbench's Python package"});
    }
  }
  policy.writable = {working_directory, tmp_directory, "/dev"};
  if (role == WorkerRole::reference) {
    if (!root.empty()) {
      policy.writable.push_back(root);
    }
  } else {
    if (!root.empty()) {
      if (role == WorkerRole::candidate) {
        policy.writable.push_back(root / "candidate");
      }
      policy.unreadable.push_back(root / "reference");
    }
    // The reference-side cache (its default place; an evaluation adds its --cache-dir's).
    policy.unreadable.push_back(reference_cache_root({}));
    if (!extensions.empty()) {
      policy.writable.push_back(extensions);
    }
  }
  // A worker that escapes its process group still stops: generous limits, far above any
  // legitimate build or run (the wall-clock deadlines stop the worker itself).
  launch.limits.open_files = 4096;
  launch.limits.file_size_bytes = worker_file_size_limit(std::getenv("KBENCH_WORKER_FSIZE_BYTES"));
  launch.limits.processes_above_current = 4096;
  return launch;
}

std::string crash_summary(const std::string& stderr_text, const std::string& candidate_path) {
  std::vector<std::string> picked;
  std::istringstream lines(stderr_text);
  std::string candidate_frame;
  const std::regex frame(R"re(File "([^"]+)", line (\d+))re");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (line.find("CUDA error") != std::string::npos ||
        line.find("Fatal Python error") != std::string::npos ||
        line.find("kbench-worker:") != std::string::npos) {
      if (picked.size() < 3) {
        picked.push_back(line);
      }
    } else if (candidate_frame.empty() && !candidate_path.empty() &&
               std::regex_search(line, match, frame) && match[1] == candidate_path) {
      candidate_frame = fmt::format("at {}:{}", candidate_path, match[2].str());
    }
  }
  if (!candidate_frame.empty()) {
    picked.push_back(candidate_frame);
  }
  std::string summary;
  for (const auto& line : picked) {
    summary += (summary.empty() ? "" : "; ") + std::regex_replace(line, std::regex(R"(^\s+)"), "");
  }
  return summary;
}

CompileOutcome compile_candidate(sandbox::WorkerClient& worker, const std::string& candidate_path,
                                 const std::filesystem::path& extensions_dir,
                                 std::chrono::milliseconds deadline) {
  CompileOutcome out;
  const auto start = Clock::now();
  out.info.ran = true;
  out.info.extensions_dir = extensions_dir.string();
  std::error_code ignored;
  std::filesystem::create_directories(out.info.extensions_dir, ignored);
  out.phase =
      run_phase(worker, requests::compile(candidate_path, out.info.extensions_dir), deadline,
                WorkerRole::compile, "importing and building the candidate", candidate_path);
  out.info.seconds = seconds_since(start);
  if (out.phase.ok) {
    out.info.extensions_dir = out.phase.body.value("extensions_dir", out.info.extensions_dir);
    out.info.cached = out.phase.body.value("cached", false);
    out.info.pch = out.phase.body.value("pch", "");
    out.info.cuda_header = out.phase.body.value("cuda_header", "");
    out.info.binding_header = out.phase.body.value("binding_header", "");
    out.info.aten_header = out.phase.body.value("aten_header", "");
  } else {
    if (out.phase.body.is_object()) {
      out.info.first_error = out.phase.body.value("first_error", "");
    }
    out.info.log = out.phase.log;
  }
  return out;
}

nlohmann::json trial_requests(std::uint64_t seed, int trials) {
  nlohmann::json requests = nlohmann::json::array();
  for (int i = 0; i < trials; ++i) {
    const std::uint32_t trial_seed = derive_seed(seed, "trial", static_cast<std::uint64_t>(i));
    requests.push_back(
        {{"index", i}, {"seed", trial_seed}, {"forward_seed", forward_seed(trial_seed)}});
  }
  return requests;
}

PhaseRecord record_of(const std::string& phase, sandbox::WorkerClient& worker,
                      std::chrono::steady_clock::time_point evaluation_start) {
  PhaseRecord record;
  record.phase = phase;
  record.started_at_s =
      std::chrono::duration<double>(worker.started_at() - evaluation_start).count();
  record.exit = worker.alive() ? "running" : "ended";
  record.started = worker.started();
  record.wall_s = worker.lifetime_s();
  for (const auto& t : worker.request_times()) {
    record.requests.push_back({t.op, t.count, t.first_at_s, t.seconds});
  }
  record.stdout_text = worker.stdout_capture().text();
  record.stderr_text = worker.stderr_capture().text();
  return record;
}

namespace {

bool allowed_for(WorkerRole role, Status status) {
  switch (role) {
  case WorkerRole::reference:
    return true;
  case WorkerRole::compile:
    // incorrect: an integrity failure while the candidate loads (it imported kbench_native).
    return status == Status::compile_error || status == Status::runtime_error ||
           status == Status::crashed || status == Status::unsupported ||
           status == Status::incorrect;
  case WorkerRole::candidate:
    return status == Status::runtime_error || status == Status::crashed ||
           status == Status::incorrect || status == Status::compile_error ||
           status == Status::unsupported;
  }
  return false;
}

std::string who(WorkerRole role) {
  switch (role) {
  case WorkerRole::compile:
    return "the compile worker";
  case WorkerRole::reference:
    return "the reference worker";
  case WorkerRole::candidate:
    return "the candidate worker";
  }
  return "a worker";
}

} // namespace

PhaseOutcome run_phase(sandbox::WorkerClient& worker, const nlohmann::json& request,
                       std::chrono::milliseconds deadline, WorkerRole role,
                       const std::string& doing, const std::string& candidate_path,
                       const sandbox::InterimHandler& on_interim) {
  using Kind = sandbox::WorkerReply::Kind;
  const sandbox::WorkerReply reply = worker.request(request, deadline, on_interim);
  PhaseOutcome outcome;
  outcome.reply = reply.kind;
  const bool reference = role == WorkerRole::reference;
  switch (reply.kind) {
  case Kind::answered: {
    outcome.body = reply.body;
    outcome.worker_usable = !reply.body.value("fatal", false);
    if (reply.body.value("ok", false)) {
      outcome.ok = true;
      outcome.status = Status::ok;
      return outcome;
    }
    const auto claimed = reply.body.contains("status") && reply.body["status"].is_string()
                             ? status_from_name(reply.body["status"].get<std::string>())
                             : std::nullopt;
    outcome.status = claimed && allowed_for(role, *claimed) ? *claimed
                     : reference                            ? Status::harness_error
                                                            : Status::runtime_error;
    const auto text = [&](const char* key) {
      return reply.body.contains(key) && reply.body[key].is_string()
                 ? reply.body[key].get<std::string>()
                 : std::string();
    };
    outcome.message = text("message");
    if (outcome.message.empty()) {
      outcome.message = who(role) + " reported a failure without a message while " + doing;
    }
    outcome.log = text("log");
    return outcome;
  }
  case Kind::timed_out:
    outcome.status = reference ? Status::harness_error : Status::timeout;
    outcome.message = fmt::format(
        "{} did not finish {} within {} s; its process group was killed{}", who(role), doing,
        std::chrono::duration_cast<std::chrono::seconds>(deadline).count(),
        role == WorkerRole::compile ? " (raise --compile-timeout if the build is legitimately slow)"
                                    : " (raise --run-timeout if the work is legitimately slow)");
    break;
  case Kind::died: {
    outcome.status = reference ? Status::harness_error : Status::crashed;
    const std::string summary =
        crash_summary(worker.stderr_capture().text(), reference ? "" : candidate_path);
    outcome.message = fmt::format("{} {} while {}{}{}", who(role), reply.exit.describe(), doing,
                                  summary.empty() ? "" : ": ", summary);
    if (!reply.exit.signaled) {
      outcome.message += " (the process ended without answering: os._exit, sys.exit or a fatal "
                         "error in native code)";
    }
    break;
  }
  case Kind::protocol_error:
    outcome.status = reference ? Status::harness_error : Status::runtime_error;
    outcome.message =
        fmt::format("{} broke the worker protocol while {}: {}", who(role), doing, reply.detail);
    break;
  }
  outcome.log = worker.stderr_capture().tail(16 * 1024);
  return outcome;
}

} // namespace kbench
