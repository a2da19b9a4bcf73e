#pragma once
// Runs the real `kbench` binary the way a user does and reads back what it printed and wrote.
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

// Expects `needle` in `haystack`, showing both when it is not there.
#define EXPECT_CONTAINS(haystack, needle)                                                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                                 \
      << "expected to find: " << (needle) << "\nin: " << (haystack)

namespace kbench::testing {

struct KbenchRun {
  int exit_code = -1;
  std::string stdout_text;
  std::string stderr_text;
  nlohmann::json result; // the --json document, when the command wrote one
  double wall_s = 0;
};

// `kbench <args...> [--json <tmp>]`; paths in args are relative to the repository root.
KbenchRun run_kbench(const std::vector<std::string>& args, bool with_json = true);

std::string repo_path(const std::string& relative);

// A program started in the background (`kbench serve`, the scripted model server) whose first
// line of standard output says it is ready; stopped with SIGTERM when destroyed.
class BackgroundProcess {
public:
  explicit BackgroundProcess(const std::vector<std::string>& argv);
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  ~BackgroundProcess();
  const std::string& first_line() const { return m_first_line; }
  int pid() const { return m_pid; }
  // Sends `signal` and waits up to kStopDeadline; returns the wait status (-1 when already
  // stopped). A program still there then fails the test with its threads' stacks, and is killed.
  int stop(int signal);
  static constexpr std::chrono::seconds kStopDeadline{120};
  void set_stop_deadline(std::chrono::seconds deadline) { m_stop_deadline = deadline; }
  // Sends `signal` without waiting.
  void send(int signal) const;
  // The wait status if the program ended within `limit`; empty while it runs on.
  std::optional<int> ended_within(std::chrono::milliseconds limit);

private:
  int m_pid = -1;
  std::string m_argv0;
  std::chrono::seconds m_stop_deadline = kStopDeadline;
  std::string m_first_line;
};
// What a process that does not end is doing: each thread's wait channel and kernel stack, the
// user stacks where gdb is installed, and its children.
std::string describe_stuck_process(int pid);

bool have_gpu();

} // namespace kbench::testing
