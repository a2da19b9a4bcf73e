#include "sandbox/process.hpp"

#include "sandbox/signals.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace kbench::sandbox {
namespace {

// Pipe fds are moved above this number in the parent so that none of them can be one of the
// child's 0..3 slots while the child rearranges them.
constexpr int kHighFd = 16;

int dup_high(int fd) {
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
  const int saved = errno;
  close(fd);
  if (high < 0) {
    throw SpawnError(std::string("cannot duplicate a pipe descriptor: ") + std::strerror(saved));
  }
  return high;
}

struct Pipe {
  int read = -1;
  int write = -1;
};

Pipe make_pipe() {
  std::array<int, 2> fds{};
  if (pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw SpawnError(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  return Pipe{dup_high(fds[0]), dup_high(fds[1])};
}

void close_fd(int& fd) {
  if (fd >= 0) {
    close(fd);
    fd = -1;
  }
}

void set_limit(int resource, rlim_t value) {
  const rlimit limit{value, value};
  setrlimit(resource, &limit);
}

// Runs in the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const SpawnSpec& spec, char* const* argv, char* const* envp,
                             const std::array<Pipe, 4>& pipes, int error_fd) {
  auto fail = [&](int stage) {
    const int report[2] = {stage, errno};
    [[maybe_unused]] auto written = write(error_fd, report, sizeof report);
    _exit(127);
  };
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL); // the worker never outlives kbench
  if (getppid() == 1) {
    _exit(127); // the parent died before prctl took effect
  }
  if (dup2(pipes[0].read, 0) < 0 || dup2(pipes[1].write, 1) < 0 || dup2(pipes[2].write, 2) < 0 ||
      dup2(pipes[3].write, kResponseFd) < 0) {
    fail(1);
  }
  // The exec-error report moves just above the response fd (closed by a successful exec);
  // everything above it goes, whatever the orchestrator had open.
  const int report_fd = kResponseFd + 1;
  if (dup2(error_fd, report_fd) < 0 || fcntl(report_fd, F_SETFD, FD_CLOEXEC) < 0) {
    _exit(127);
  }
  error_fd = report_fd;
  syscall(SYS_close_range, report_fd + 1, ~0U, 0);
  signal(SIGPIPE, SIG_DFL);
  if (!spec.limits.core_dumps) {
    set_limit(RLIMIT_CORE, 0);
  }
  if (spec.limits.open_files) {
    set_limit(RLIMIT_NOFILE, *spec.limits.open_files);
  }
  if (spec.limits.file_size_bytes) {
    set_limit(RLIMIT_FSIZE, *spec.limits.file_size_bytes);
  }
  if (spec.limits.cpu_seconds) {
    set_limit(RLIMIT_CPU, *spec.limits.cpu_seconds);
  }
  if (!spec.working_directory.empty() && chdir(spec.working_directory.c_str()) != 0) {
    fail(2);
  }
  execve(argv[0], argv, envp);
  fail(3);
  _exit(127); // fail() does not return; this tells the compiler
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

  std::array<Pipe, 4> pipes{make_pipe(), make_pipe(), make_pipe(), make_pipe()};
  Pipe errors = make_pipe();

  const pid_t pid = fork();
  if (pid < 0) {
    const int saved = errno;
    for (auto& p : pipes) {
      close_fd(p.read);
      close_fd(p.write);
    }
    close_fd(errors.read);
    close_fd(errors.write);
    throw SpawnError(std::string("fork failed: ") + std::strerror(saved));
  }
  if (pid == 0) {
    exec_child(spec, argv.data(), envp.data(), pipes, errors.write);
  }
  // Also from the parent, so that a kill of the group right after spawn cannot miss the child.
  setpgid(pid, pid);

  Process process;
  process.m_pid = pid;
  process.m_stdin = std::exchange(pipes[0].write, -1);
  process.m_stdout = std::exchange(pipes[1].read, -1);
  process.m_stderr = std::exchange(pipes[2].read, -1);
  process.m_response = std::exchange(pipes[3].read, -1);
  for (auto& p : pipes) {
    close_fd(p.read);
    close_fd(p.write);
  }
  close_fd(errors.write);

  int report[2] = {0, 0};
  const ssize_t got = read(errors.read, report, sizeof report);
  close_fd(errors.read);
  if (got == static_cast<ssize_t>(sizeof report)) {
    process.wait();
    static constexpr std::array<const char*, 4> stages = {"", "set up its pipes",
                                                          "enter its working directory", "exec"};
    throw SpawnError(std::string("cannot start ") + spec.argv[0] + ": could not " +
                     stages[static_cast<std::size_t>(report[0]) % stages.size()] + ": " +
                     std::strerror(report[1]));
  }
  return process;
}

Process::Process(Process&& other) noexcept {
  *this = std::move(other);
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    release();
    m_pid = std::exchange(other.m_pid, -1);
    m_stdin = std::exchange(other.m_stdin, -1);
    m_response = std::exchange(other.m_response, -1);
    m_stdout = std::exchange(other.m_stdout, -1);
    m_stderr = std::exchange(other.m_stderr, -1);
    m_status = std::exchange(other.m_status, std::nullopt);
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
  close_fd(m_stdin);
  close_fd(m_response);
  close_fd(m_stdout);
  close_fd(m_stderr);
  m_pid = -1;
}

void Process::close_request_fd() {
  close_fd(m_stdin);
}
void Process::close_response_fd() {
  close_fd(m_response);
}
void Process::close_stdout_fd() {
  close_fd(m_stdout);
}
void Process::close_stderr_fd() {
  close_fd(m_stderr);
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
    m_status = to_exit_status(raw);
    // Whatever the worker started dies with it: nothing of an evaluation outlives it.
    ::kill(-m_pid, SIGKILL);
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
      m_status = ExitStatus{};
      return *m_status;
    }
  }
  m_status = to_exit_status(raw);
  ::kill(-m_pid, SIGKILL);
  return *m_status;
}

} // namespace kbench::sandbox
