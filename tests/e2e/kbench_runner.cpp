#include "kbench_runner.hpp"

#include "sched/device_probe.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kbench::testing {
namespace fs = std::filesystem;

namespace {

std::string quote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

} // namespace

std::string repo_path(const std::string& relative) {
  return (fs::path(KBENCH_SOURCE_DIR) / relative).string();
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv)
    : m_argv0(argv.empty() ? std::string() : argv.front()) {
  int out[2];
  if (pipe(out) != 0) {
    throw std::runtime_error("pipe");
  }
  m_pid = fork();
  if (m_pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    std::vector<std::string> args = argv;
    std::vector<char*> pointers;
    for (auto& arg : args) {
      pointers.push_back(arg.data());
    }
    pointers.push_back(nullptr);
    execv(pointers[0], pointers.data());
    _exit(127);
  }
  close(out[1]);
  char c = 0;
  while (read(out[0], &c, 1) == 1 && c != '\n') {
    m_first_line += c;
  }
  close(out[0]);
}

BackgroundProcess::~BackgroundProcess() {
  stop(SIGTERM);
}

int BackgroundProcess::stop(int signal) {
  if (m_pid <= 0) {
    return -1;
  }
  send(signal);
  // A program that does not end within the deadline fails the test with what it was doing,
  // rather than holding the whole suite until CTest's timeout.
  if (const auto status = ended_within(m_stop_deadline)) {
    return *status;
  }
  ADD_FAILURE() << "process " << m_pid << " (" << m_argv0 << ") did not end within "
                << m_stop_deadline.count() << " s of signal " << signal << "; what it was doing:\n"
                << describe_stuck_process(m_pid);
  kill(m_pid, SIGKILL);
  int status = 0;
  waitpid(m_pid, &status, 0);
  m_pid = -1;
  return status;
}

void BackgroundProcess::send(int signal) const {
  if (m_pid > 0) {
    kill(m_pid, signal);
  }
}

std::optional<int> BackgroundProcess::ended_within(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (m_pid > 0) {
    const pid_t got = waitpid(m_pid, &status, WNOHANG);
    if (got == m_pid || (got < 0 && errno == ECHILD)) { // ECHILD: reaped already
      m_pid = -1;
      return status;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

std::string describe_stuck_process(int pid) {
  std::ostringstream out;
  const fs::path tasks = fs::path("/proc") / std::to_string(pid) / "task";
  std::error_code error;
  for (const auto& task : fs::directory_iterator(tasks, error)) {
    const auto first_line = [&](const char* name) {
      std::string line;
      std::ifstream in(task.path() / name);
      std::getline(in, line);
      return line;
    };
    out << "thread " << task.path().filename().string() << " (" << first_line("comm")
        << "): waits in " << first_line("wchan") << "\n";
    const std::string stack = slurp(task.path() / "stack");
    if (!stack.empty()) {
      out << stack;
    }
  }
  // The threads' own stacks, where gdb is there to read them (scripts/setup.sh installs it).
  const std::string gdb = "timeout 60 gdb -p " + std::to_string(pid) +
                          " -batch -ex 'thread apply all bt 30' 2>&1 | grep -E '^(Thread|#)'";
  const std::string children = "ps -o pid,stat,wchan:24,etime,args --ppid " + std::to_string(pid);
  for (const auto& command : {gdb, children}) {
    if (FILE* pipe = popen(command.c_str(), "r")) {
      std::array<char, 4096> buffer{};
      std::size_t n = 0;
      while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
        out.write(buffer.data(), static_cast<std::streamsize>(n));
      }
      pclose(pipe);
    }
  }
  return out.str();
}

bool have_gpu() {
  return !sched::probe_devices().gpus.empty();
}

KbenchRun run_kbench(const std::vector<std::string>& args, bool with_json) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / ("kbench_e2e_" + std::to_string(::getpid()) +
                                                    "_" + std::to_string(counter++));
  fs::create_directories(dir);
  std::string command = quote(KBENCH_BINARY);
  for (const auto& arg : args) {
    command += " " + quote(arg);
  }
  if (with_json) {
    command += " --json " + quote((dir / "result.json").string());
  }
  command += " > " + quote((dir / "stdout").string()) + " 2> " + quote((dir / "stderr").string());
  const auto start = std::chrono::steady_clock::now();
  const int raw = std::system(command.c_str());
  KbenchRun run;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.exit_code = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.stdout_text = slurp(dir / "stdout");
  run.stderr_text = slurp(dir / "stderr");
  if (with_json && fs::exists(dir / "result.json")) {
    run.result = nlohmann::json::parse(slurp(dir / "result.json"));
  }
  fs::remove_all(dir);
  return run;
}

} // namespace kbench::testing
