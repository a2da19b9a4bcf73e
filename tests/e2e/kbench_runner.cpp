#include "kbench_runner.hpp"

#include "sched/device_probe.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
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

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv) {
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
  kill(m_pid, signal);
  int status = 0;
  waitpid(m_pid, &status, 0);
  m_pid = -1;
  return status;
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
