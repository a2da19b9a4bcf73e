#pragma once
// One phase of an evaluation run in a worker process, and what its answer means for the
// result: the translation from "the worker died of SIGSEGV" or "answered runtime_error" to a
// status and a message a person can act on.
#include "core/result.hpp"
#include "sandbox/environment.hpp"
#include "sandbox/worker_client.hpp"
#include "sched/device_probe.hpp"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kbench {

// Who runs in the worker decides which statuses its answers may claim: the reference process
// is trusted; a process that ran candidate code is not (it could claim "harness_error" to
// shift the blame, so such claims become runtime errors).
enum class WorkerRole { compile, reference, candidate };

struct WorkerLaunch {
  std::filesystem::path worker;
  std::filesystem::path python; // empty: the worker's default
  std::filesystem::path working_directory;
  sandbox::EnvironmentMap environment; // kbench's settings; the clean base is added
  std::size_t output_keep_bytes = 64 * 1024;
  // What the worker is confined to (docs/architecture.md, "Sandbox"). launch_worker skips
  // network isolation for ranks of a collective evaluation (WORLD_SIZE > 1 in `environment`).
  sandbox::SandboxPolicy sandbox;
  sandbox::Limits limits;
  // A program the worker runs under (Nsight Compute for --profile), its arguments before the
  // worker's: it shares the worker's sandbox, limits and protocol pipes.
  std::vector<std::string> wrapper;
};

std::unique_ptr<sandbox::WorkerClient> launch_worker(const WorkerLaunch& launch);

// A worker started as another user (a root kbench) must be able to read the problem and the
// candidate (either may be empty): checked as that user at the spawn, which fails with the
// path and what to do when it cannot.
void must_read_sources(WorkerLaunch& launch, const std::filesystem::path& problem,
                       const std::filesystem::path& candidate);

// What keys an extension build directory by the user the workers run as ("--worker-uid=N\n",
// or "" when they run as kbench's user): a root kbench's workers cannot rewrite a build that
// root workers left, so builds of different users never share a directory.
std::string worker_user_build_setting();

// The protections KBENCH_SANDBOX turns off: none when unset or "on", all for "off", the named
// ones for "off:network,filesystem". Anything else throws, naming the variable and the choices.
std::set<std::string> protections_turned_off(const char* setting);

// RLIMIT_FSIZE for every worker: 8 GiB, or KBENCH_WORKER_FSIZE_BYTES (`setting`; tests lower it).
// It bounds the files a worker writes itself; tensor files pass outside it (transfer_files.hpp).
// Throws, naming the variable, for anything but a positive number of bytes.
rlim_t worker_file_size_limit(const char* setting);

// RLIMIT_CPU for a worker whose deadlines add up to `deadlines`: twice that, on every core (the
// limit counts the CPU time of all the worker's threads).
rlim_t cpu_seconds_limit(std::chrono::seconds deadlines);

// Merges one worker's protections into the result: a protection is active only if it is active
// in every worker; each protection that is off or degraded adds one warning.
void record_protections(EvalResult& result, const std::vector<sandbox::Protection>& protections);

// The device an evaluation runs on, resolved from --device and --gpu.
struct DeviceChoice {
  std::string device;      // "cuda:0" (workers see only the chosen GPUs) or "cpu"
  std::string device_name; // "NVIDIA H200", "cpu"
  std::optional<sched::GpuInfo> gpu;
  std::string unsupported; // why the request cannot be met here; empty when it can
  int world_size = 1;      // ranks, one GPU each on cuda: GPUs gpu_index .. gpu_index+world-1
};
DeviceChoice choose_device(const std::string& wanted, int gpu_index, int world_size = 1);

// The launch of a worker for `role` on `choice`: its working directory, TMPDIR, the device it
// sees (none for the compile role: a candidate's import cannot touch the GPU), the arch list
// its builds target, and its sandbox: no network, the syscall filter, resource limits, and
// writes only beneath (every role) its working directory, TMPDIR, /dev (GPU device files,
// /dev/shm for NCCL) and
//   - reference: the whole `scratch` (it writes inputs/ and reference/);
//   - compile and candidate: `scratch`/candidate and `extensions` (the extension build
//     directory), and no read of `scratch`/reference (the reference's outputs).
// `scratch` defaults to the common parent of the working and tmp directories.
WorkerLaunch worker_launch_for(WorkerRole role, const DeviceChoice& choice, int gpu_index,
                               const std::filesystem::path& working_directory,
                               const std::filesystem::path& tmp_directory,
                               const std::filesystem::path& python, std::size_t output_keep_bytes,
                               const std::filesystem::path& scratch = {},
                               const std::filesystem::path& extensions = {});

struct PhaseOutcome {
  bool ok = false;
  Status status = Status::harness_error;
  std::string message;
  std::string log;
  nlohmann::json body;        // the answer, when the worker answered
  bool worker_usable = false; // false after a crash, a timeout or a fatal CUDA error
  sandbox::WorkerReply::Kind reply = sandbox::WorkerReply::Kind::answered;
};

// Sends `request` and interprets the reply. `doing` says what the phase was doing, for
// messages ("running the candidate's trials"). `on_interim` answers the worker's messages in the
// middle of the request (the timed blocks' per-call exchange).
PhaseOutcome run_phase(sandbox::WorkerClient& worker, const nlohmann::json& request,
                       std::chrono::milliseconds deadline, WorkerRole role,
                       const std::string& doing, const std::string& candidate_path,
                       const sandbox::InterimHandler& on_interim = {});

// The compile phase: the candidate imported with the GPU hidden, so that its load_inline
// extensions build in `extensions_dir` (created if missing). `info` says where the build went,
// whether it was cached and, when it failed, its first error and log.
struct CompileOutcome {
  PhaseOutcome phase;
  CompileInfo info;
};
CompileOutcome compile_candidate(sandbox::WorkerClient& worker, const std::string& candidate_path,
                                 const std::filesystem::path& extensions_dir,
                                 std::chrono::milliseconds deadline);

// The most telling lines of a dead worker's stderr: a CUDA error, a fatal Python error, the
// candidate's frame.
std::string crash_summary(const std::string& stderr_text, const std::string& candidate_path);

// The reference's trials: index, seed (derived from --seed) and forward_seed, as the reference
// worker takes them.
nlohmann::json trial_requests(std::uint64_t seed, int trials);

// What a worker did: its output, whether it still runs, and its lifetime (spawn to exit, or
// to now while it runs), not the time since its spawn: a compile worker ends long before the
// evaluation does.
PhaseRecord record_of(const std::string& phase, sandbox::WorkerClient& worker,
                      std::chrono::steady_clock::time_point evaluation_start);

} // namespace kbench
