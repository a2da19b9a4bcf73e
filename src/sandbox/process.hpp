#pragma once
// Spawning a worker: its own process group, a clean environment, resource limits, no core
// dumps, pipes for stdin/stdout/stderr and a private response channel on fd 3, and a kill of
// the whole group when its time is up (DESIGN section 3).
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
#include <vector>

namespace kbench::sandbox {

struct Limits {
  std::optional<rlim_t> open_files = 4096;
  std::optional<rlim_t> file_size_bytes;
  std::optional<rlim_t> cpu_seconds;
  bool core_dumps = false;
};

struct SpawnSpec {
  std::vector<std::string> argv;        // argv[0] is the executable's path
  std::vector<std::string> environment; // "NAME=value", the whole environment
  std::filesystem::path working_directory;
  Limits limits;
};

struct ExitStatus {
  bool signaled = false;
  int code = 0;                 // exit code when !signaled
  int signal = 0;               // signal number when signaled
  std::string describe() const; // "exited with code 3", "killed by SIGSEGV (segmentation ...)"
};

class SpawnError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The fd on which the child writes protocol responses.
inline constexpr int kResponseFd = 3;

class Process {
public:
  static Process spawn(const SpawnSpec& spec); // throws SpawnError with the reason
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete; // owns a process group and its pipes
  Process& operator=(const Process&) = delete;
  ~Process(); // kills the group if it is still running

  pid_t pid() const { return m_pid; }
  int request_fd() const { return m_stdin; } // write end of the child's stdin
  int response_fd() const { return m_response; }
  int stdout_fd() const { return m_stdout; }
  int stderr_fd() const { return m_stderr; }
  void close_request_fd();
  void close_response_fd();
  void close_stdout_fd();
  void close_stderr_fd();

  // SIGKILL to every process of the group (the worker and whatever it started).
  void kill_group();
  std::optional<ExitStatus> try_wait();
  ExitStatus wait();
  bool reaped() const { return m_status.has_value(); }

private:
  Process() = default;
  void release() noexcept;

  pid_t m_pid = -1;
  int m_stdin = -1, m_response = -1, m_stdout = -1, m_stderr = -1;
  std::optional<ExitStatus> m_status;
};

} // namespace kbench::sandbox
