#include "sandbox/process.hpp"

#include "sandbox/protections.hpp"
#include "sandbox/signals.hpp"
#include "sandbox/spawn_steps.hpp"
#include "sandbox/unique_fd.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace kbench::sandbox {
namespace {

// Moves `fd` above kHighFd, so that none of the parent's ends can be one of the child's 0..3
// slots while the child rearranges them.
UniqueFd dup_high(UniqueFd fd) {
  UniqueFd high(fcntl(fd.get(), F_DUPFD_CLOEXEC, kHighFd));
  const int saved = errno;
  fd.reset();
  if (!high.valid()) {
    throw SpawnError(std::string("cannot duplicate a pipe descriptor: ") + std::strerror(saved));
  }
  return high;
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Pipe make_pipe() {
  std::array<int, 2> fds{};
  if (pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw SpawnError(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  UniqueFd read(fds[0]), write(fds[1]);
  return Pipe{dup_high(std::move(read)), dup_high(std::move(write))};
}

// What to do when the worker's user cannot start or reach something.
std::string user_advice() {
  return fmt::format(
      "kbench runs as root and starts its workers as {} (default nobody) so that the process "
      "limit holds: give that user search permission on the directories above it (chmod o+x; "
      "scripts/worker-access.sh does this for the Python environment, the build and the "
      "cache), move it where that user can reach it, or set {} to another user (root keeps "
      "workers as root, without the process limit); see README.md, \"Running as root\"",
      kWorkerUserVariable, kWorkerUserVariable);
}

std::string fatal_message(const SpawnSpec& spec, const Prepared& prepared,
                          const ChildRecord& fatal) {
  const std::string start = "cannot start " + spec.argv[0];
  const std::string error = std::strerror(fatal.error);
  const std::string user = spec.sandbox.user ? spec.sandbox.user->describe() : "its user";
  if (fatal.step == kFatalUser) {
    static constexpr std::array<const char*, 6> calls = {
        "drop its supplementary groups (setgroups)",
        "set its group (setresgid)",
        "set its user (setresuid)",
        "verify its new ids",
        "lose root (setresuid(0) worked)",
        "set its parent-death signal again"};
    return fmt::format("{}: could not switch to {}: could not {}: {}. {}", start, user,
                       calls[static_cast<std::size_t>(fatal.index) % calls.size()], error,
                       user_advice());
  }
  if (fatal.step == kFatalReach && fatal.index >= 0 &&
      static_cast<std::size_t>(fatal.index) < prepared.reach.size()) {
    const auto& step = prepared.reach[static_cast<std::size_t>(fatal.index)];
    const std::string how = step.above
                                ? fmt::format("the directory {} is not searchable by it", step.path)
                            : (step.mode & W_OK) != 0 ? "it is not writable by it"
                            : (step.mode & R_OK) != 0 ? "it is not readable by it"
                                                      : "it cannot be entered or run by it";
    return fmt::format("{} as {}: {} {}: {} ({}). {}", start, user, step.what, step.of, how, error,
                       user_advice());
  }
  static constexpr std::array<const char*, 9> stages = {
      "",
      "set up its pipes",
      "enter its working directory",
      "exec",
      "map its user namespace ids",
      "keep its Landlock ruleset",
      "switch its user",
      "reach a path",
      "take over its launch environment and parent as a forked worker (set "
      "KBENCH_FORK_SERVER=off to spawn workers instead)"};
  return start + ": could not " + stages[static_cast<std::size_t>(fatal.step) % stages.size()] +
         ": " + error;
}

} // namespace

std::string ExitStatus::describe() const {
  if (signaled) {
    return "was killed by " + signal_name(signal) + " (" + signal_description(signal) + ")";
  }
  return "exited with code " + std::to_string(code);
}

Process Process::spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) {
    throw SpawnError("no program to start");
  }
  std::vector<char*> argv;
  for (const auto& arg : spec.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& entry : spec.environment) {
    envp.push_back(const_cast<char*>(entry.c_str()));
  }
  envp.push_back(nullptr);

  const Prepared prepared = prepare(spec);

  std::array<Pipe, 4> pipes{make_pipe(), make_pipe(), make_pipe(), make_pipe()};
  if (spec.stdin_fd >= 0) {
    UniqueFd control(fcntl(spec.stdin_fd, F_DUPFD_CLOEXEC, kHighFd));
    if (!control.valid()) {
      throw SpawnError(std::string("cannot duplicate the control socket: ") + std::strerror(errno));
    }
    pipes[0].read = std::move(control);
    pipes[0].write.reset();
  }
  Pipe errors = make_pipe();

  const pid_t pid = fork();
  if (pid < 0) {
    const int saved = errno;
    throw SpawnError(std::string("fork failed: ") + std::strerror(saved)); // the pipes close
  }
  if (pid == 0) {
    // No destructor runs in the child: exec_child leaves through execve or _exit only.
    exec_child(
        spec, prepared, argv.data(), envp.data(),
        {pipes[0].read.get(), pipes[1].write.get(), pipes[2].write.get(), pipes[3].write.get()},
        errors.write.get());
  }
  // Also from the parent, so that a kill of the group right after spawn cannot miss the child.
  setpgid(pid, pid);

  Process process;
  process.m_pid = pid;
  process.m_spawned_at = std::chrono::steady_clock::now();
  process.m_stdin = std::move(pipes[0].write);
  process.m_stdout = std::move(pipes[1].read);
  process.m_stderr = std::move(pipes[2].read);
  process.m_response = std::move(pipes[3].read);
  // The child's ends go now: the records' read below ends when the child's copy closes.
  for (auto& p : pipes) {
    p.read.reset();
    p.write.reset();
  }
  errors.write.reset();
  process.read_setup(spec, prepared, std::move(errors.read));
  return process;
}

Process Process::adopt_forked(pid_t pid, std::array<UniqueFd, 4> ends, UniqueFd errors,
                              const SpawnSpec& spec, const Prepared& prepared) {
  Process process;
  process.m_pid = pid;
  process.m_started = "forked";
  process.m_spawned_at = std::chrono::steady_clock::now();
  process.m_stdin = std::move(ends[0]);
  process.m_stdout = std::move(ends[1]);
  process.m_stderr = std::move(ends[2]);
  process.m_response = std::move(ends[3]);
  process.read_setup(spec, prepared, std::move(errors));
  return process;
}

void Process::read_setup(const SpawnSpec& spec, const Prepared& prepared, UniqueFd errors) {
  // The child's records until exec closes the pipe: each protection step, or a fatal one.
  StepErrors steps{};
  steps.fill(kNotTried);
  std::optional<ChildRecord> fatal;
  for (;;) {
    ChildRecord record{};
    const ssize_t got = read(errors.get(), &record, sizeof record);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got != static_cast<ssize_t>(sizeof record)) {
      break;
    }
    if (record.kind == kFatalRecord) {
      fatal = record;
    } else if (record.kind == kStepRecord && record.step >= 0 && record.step < kStepCount) {
      steps[static_cast<std::size_t>(record.step)] = record.error;
    }
  }
  errors.reset();
  if (fatal) {
    wait();
    throw SpawnError(fatal_message(spec, prepared, *fatal));
  }
  m_protections = protections_from(spec, prepared, steps);
}

Process::Process(Process&& other) noexcept {
  *this = std::move(other);
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    release();
    m_pid = std::exchange(other.m_pid, -1);
    m_stdin = std::move(other.m_stdin);
    m_response = std::move(other.m_response);
    m_stdout = std::move(other.m_stdout);
    m_stderr = std::move(other.m_stderr);
    m_status = std::exchange(other.m_status, std::nullopt);
    m_protections = std::exchange(other.m_protections, {});
    m_started = std::exchange(other.m_started, "spawned");
    m_spawned_at = other.m_spawned_at;
    m_reaped_at = other.m_reaped_at;
  }
  return *this;
}

Process::~Process() {
  release();
}

void Process::release() noexcept {
  if (m_pid > 0 && !m_status) {
    kill_group();
    try {
      wait();
    } catch (...) {
    }
  }
  m_stdin.reset();
  m_response.reset();
  m_stdout.reset();
  m_stderr.reset();
  m_pid = -1;
}

void Process::close_request_fd() {
  m_stdin.reset();
}
void Process::close_response_fd() {
  m_response.reset();
}
void Process::close_stdout_fd() {
  m_stdout.reset();
}
void Process::close_stderr_fd() {
  m_stderr.reset();
}

void Process::kill_group() {
  if (m_pid > 0) {
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL); // in case the worker left its group
  }
}

static ExitStatus to_exit_status(int raw) {
  ExitStatus status;
  if (WIFSIGNALED(raw)) {
    status.signaled = true;
    status.signal = WTERMSIG(raw);
  } else {
    status.code = WEXITSTATUS(raw);
  }
  return status;
}

std::optional<ExitStatus> Process::try_wait() {
  if (m_status || m_pid <= 0) {
    return m_status;
  }
  int raw = 0;
  const pid_t got = waitpid(m_pid, &raw, WNOHANG);
  if (got == m_pid) {
    note_reaped(to_exit_status(raw));
    // Whatever the worker started dies with it: nothing of an evaluation outlives it.
    ::kill(-m_pid, SIGKILL);
    reap_group_orphans();
  }
  return m_status;
}

ExitStatus Process::wait() {
  if (m_status) {
    return *m_status;
  }
  int raw = 0;
  while (waitpid(m_pid, &raw, 0) < 0) {
    if (errno != EINTR) {
      return note_reaped(ExitStatus{});
    }
  }
  note_reaped(to_exit_status(raw));
  ::kill(-m_pid, SIGKILL);
  reap_group_orphans();
  return *m_status;
}

namespace {
std::atomic<bool> g_subreaper{false};
}

void Process::note_subreaper() {
  g_subreaper = true;
}

// As the workers' subreaper, kbench inherits the members of a worker's group whose parent died
// (a compiler the worker started, killed with the group above): they are reaped here, only
// those of this group (never waitpid(-1), which would take another child's status, popen's).
// The leader is reaped, so each of them dies of the group's SIGKILL; a short wait lets their
// parents die first and hand them over.
void Process::reap_group_orphans() {
  if (!g_subreaper || m_pid <= 0) {
    return;
  }
  for (int round = 0; round < 20; ++round) {
    int raw = 0;
    const pid_t got = waitpid(-m_pid, &raw, WNOHANG);
    if (got < 0) {
      return; // ECHILD: none of kbench's children is in the group any more
    }
    if (got == 0) {
      usleep(2000);
    }
  }
}

const ExitStatus& Process::note_reaped(ExitStatus status) {
  m_status = status;
  m_reaped_at = std::chrono::steady_clock::now();
  return *m_status;
}

double Process::lifetime_s() const {
  const auto end = m_status ? m_reaped_at : std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - m_spawned_at).count();
}

} // namespace kbench::sandbox
