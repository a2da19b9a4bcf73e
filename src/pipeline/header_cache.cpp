#include "pipeline/header_cache.hpp"

#include "sandbox/environment.hpp"
#include "sched/paths.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace kbench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::optional<fs::path> pch_root(const fs::path& cache_dir) {
  const char* value = std::getenv("KBENCH_PCH");
  const std::string setting = value ? value : "";
  // Opt-in: finding the flags torch would use costs a Python process that imports torch before
  // every compile request, cached builds included (1.3 s of a 3.4 s warm evaluation on the
  // 2-core machine), and the header's first build 36-46 s; it pays where many C++ candidates
  // build cold, not on a warm evaluation.
  if (setting.empty() || setting == "off") {
    return std::nullopt;
  }
  if (setting != "on") {
    throw std::invalid_argument(fmt::format(
        "KBENCH_PCH={} is not a choice: set it to `on` (load_inline builds its binding unit "
        "against kbench's precompiled torch/extension.h) or `off`, or leave it unset (off)",
        setting));
  }
  return (cache_dir.empty() ? sched::cache_directory() : cache_dir) / "pch";
}

bool pch_safe_for_worker(bool restrict_filesystem, bool runs_as_other_user) {
  return restrict_filesystem || runs_as_other_user;
}

bool offer_pch(WorkerLaunch& launch, WorkerRole role, const fs::path& root) {
  if (role == WorkerRole::reference ||
      !pch_safe_for_worker(launch.sandbox.restrict_filesystem, launch.sandbox.user.has_value())) {
    return false;
  }
  // Made before the worker starts: its Landlock rules grant reads on the cache's entries that
  // exist at the spawn (the cache holds the unreadable reference/), so a pch/ made later by
  // the builder would stay invisible to it.
  std::error_code error;
  fs::create_directories(root, error);
  if (error || !fs::is_directory(root)) {
    return false;
  }
  fs::permissions(root,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  error);
  launch.environment["KBENCH_PCH_DIR"] = root.string();
  return true;
}

std::string prepare_pch(const fs::path& root, const fs::path& python, const std::string& candidate,
                        std::chrono::milliseconds deadline) {
  if (fs::path(candidate).extension() != ".py") {
    return ""; // a native candidate (.cu, .cpp) builds without torch's headers
  }
  const fs::path interpreter = python.empty() ? fs::path(KBENCH_DEFAULT_PYTHON) : python;
  const std::vector<std::string> args = {
      interpreter.string(), "-m", "kbench.pch", "--root", root.string(), "--candidate", candidate};
  // The workers' own variables (CUDA_HOME, CXX ...), so torch computes the flags they will.
  sandbox::EnvironmentMap overrides = {
      {"PYTHONPATH", (fs::path(KBENCH_SOURCE_DIR) / "python").string()}};
  if (const char* cap = std::getenv("KBENCH_PCH_MAX_ENTRIES")) {
    overrides["KBENCH_PCH_MAX_ENTRIES"] = cap;
  }
  const auto envs = sandbox::to_envp(sandbox::worker_environment(overrides));
  std::vector<char*> argv, envp;
  for (const auto& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : envs)
    envp.push_back(const_cast<char*>(e.c_str()));
  argv.push_back(nullptr);
  envp.push_back(nullptr);

  std::array<int, 2> pipe_fds{};
  if (pipe(pipe_fds.data()) != 0) {
    return fmt::format("precompiled header not prepared: pipe: {}", std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP); // its own group: g++ dies with it
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return fmt::format("precompiled header not prepared: cannot start {}: {}", argv[0],
                       std::strerror(spawned));
  }
  std::string output;
  bool killed = false;
  const auto end = Clock::now() + deadline;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    if (left.count() <= 0) {
      kill(-pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    const int ready = poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      continue;
    std::array<char, 4096> buffer{};
    const ssize_t got = read(pipe_fds[0], buffer.data(), buffer.size());
    if (got <= 0)
      break;
    if (output.size() < 64 * 1024)
      output.append(buffer.data(), static_cast<std::size_t>(got));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (killed) {
    return fmt::format("precompiled header not prepared: kbench.pch ran past {} s; the "
                       "candidate builds without it",
                       deadline.count() / 1000);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!output.empty() && (output.back() == '\n' || output.back() == ' '))
      output.pop_back();
    const auto cut = output.size() > 600 ? output.substr(output.size() - 600) : output;
    return fmt::format("precompiled header not prepared (the candidate builds without it): {}",
                       cut);
  }
  return "";
}

CompileOutcome compile_with_pch(sandbox::WorkerClient& worker,
                                const std::optional<fs::path>& pch_dir, const fs::path& python,
                                const std::string& candidate_path, const fs::path& extensions_base,
                                std::chrono::seconds timeout) {
  const auto start = Clock::now();
  const std::string unprepared =
      pch_dir ? prepare_pch(*pch_dir, python, candidate_path, timeout) : "";
  const double prepared_s = std::chrono::duration<double>(Clock::now() - start).count();
  CompileOutcome out = compile_candidate(worker, candidate_path, extensions_base, timeout);
  out.info.seconds += prepared_s;
  if (!unprepared.empty()) {
    out.info.pch = "not used: " + unprepared;
  }
  return out;
}

} // namespace kbench
