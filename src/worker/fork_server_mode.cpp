#include "worker/fork_server_mode.hpp"

#include "sandbox/fork_server.hpp"
#include "sandbox/process.hpp"
#include "worker/protocol_loop.hpp"

#include <Python.h>
#include <nlohmann/json.hpp>
#include <pybind11/embed.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace py = pybind11;

namespace kbench::worker {
namespace {

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Mappings a child could write and the server (or a later child) would see: none may exist.
std::string shared_writable_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::string found;
  for (std::string line; std::getline(maps, line);) {
    const auto space = line.find(' ');
    if (space != std::string::npos && line.size() > space + 4 && line[space + 2] == 'w' &&
        line[space + 4] == 's') {
      found += (found.empty() ? "" : "; ") + line;
    }
  }
  return found;
}

std::string threads_now() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) {
      return line.substr(8 + line.substr(8).find_first_not_of(" \t"));
    }
  }
  return "?";
}

// The imports every job shares; an error, or empty. CUDA must stay untouched: a fork after
// its initialisation leaves the child with a broken driver state.
std::string warm_up() {
  try {
    py::module_::import("faulthandler").attr("enable")();
    py::module_::import("torch");
    py::module_::import("kbench.worker.handlers");
    const py::object cuda = py::module_::import("torch.cuda");
    if (cuda.attr("is_initialized")().cast<bool>()) {
      return "CUDA was initialised while importing torch and kbench's worker modules";
    }
  } catch (const py::error_already_set& error) {
    return std::string("import failed: ") + error.what();
  }
  if (const auto shared = shared_writable_mappings(); !shared.empty()) {
    return "writable shared mappings a child could change for later ones: " + shared;
  }
  return {};
}

std::string take_environment(const std::vector<std::string>& environment,
                             const std::filesystem::path& python) {
  std::vector<std::string> wanted = environment;
  std::string path = "/usr/bin:/bin";
  for (const auto& entry : wanted) {
    if (entry.rfind("PATH=", 0) == 0) {
      path = entry.substr(5);
    }
  }
  std::erase_if(wanted, [](const std::string& e) { return e.rfind("PATH=", 0) == 0; });
  wanted.push_back("PATH=" + worker_path(python, path.c_str()));
  try {
    // os.environ's clear and assignments call unsetenv and putenv: both views change together.
    py::object os = py::module_::import("os");
    py::object env = os.attr("environ");
    env.attr("clear")();
    if (clearenv() != 0) {
      return "clearenv failed";
    }
    for (const auto& entry : wanted) {
      const auto eq = entry.find('=');
      env[py::str(entry.substr(0, eq))] = py::str(entry.substr(eq + 1));
    }
    // Read lazily and cached by the first use: the server's value must not stay.
    py::object modules = py::module_::import("sys").attr("modules");
    if (modules.contains("tempfile")) {
      modules["tempfile"].attr("tempdir") = py::none();
    }
  } catch (const py::error_already_set& error) {
    return std::string("cannot set the launch environment: ") + error.what();
  }
  std::vector<std::string> now;
  for (char** e = environ; *e; ++e) {
    now.emplace_back(*e);
  }
  std::sort(now.begin(), now.end());
  std::sort(wanted.begin(), wanted.end());
  if (now != wanted) {
    return "the environment after the takeover is not the launch environment";
  }
  return {};
}

} // namespace

std::string worker_path(const std::filesystem::path& python, const char* path) {
  return python.parent_path().string() + ":" + (path ? path : "/usr/bin:/bin");
}

int run_worker() {
  // Keep the response channel away from fd 3, and from every process the phases start
  // (compilers, ninja): only this process answers.
  const int response_fd = fcntl(sandbox::kResponseFd, F_DUPFD_CLOEXEC, 100);
  if (response_fd < 0) {
    std::cerr << "kbench-worker: no response channel on fd 3; this program is started by kbench\n";
    return 64;
  }
  close(sandbox::kResponseFd);
  try {
    // A segfault in native code then leaves a Python traceback on stderr.
    py::module_::import("faulthandler").attr("enable")();
    return serve(response_fd);
  } catch (const std::exception& error) {
    std::cerr << "kbench-worker: " << error.what() << "\n";
    return 70;
  }
}

int run_fork_server(const std::filesystem::path& python) {
  const std::string error = warm_up();
  const nlohmann::json ready = error.empty()
                                   ? nlohmann::json{{"ready", true}, {"threads", threads_now()}}
                                   : nlohmann::json{{"ready", false}, {"error", error}};
  write_all(sandbox::kResponseFd, ready.dump() + "\n");
  close(sandbox::kResponseFd);
  if (!error.empty()) {
    return 65;
  }
  std::fflush(nullptr);
  sandbox::ForkHooks hooks;
  hooks.before_fork = [] {
    std::fflush(nullptr);
    PyOS_BeforeFork();
  };
  hooks.after_fork_parent = [] { PyOS_AfterFork_Parent(); };
  hooks.after_fork_child = [] {
    PyOS_AfterFork_Child();
    // Python ignores SIGPIPE from its start (a broken pipe is an exception), as after exec.
    signal(SIGPIPE, SIG_IGN);
  };
  hooks.take_environment = [&python](const std::vector<std::string>& environment) {
    return take_environment(environment, python);
  };
  hooks.run_job = [] {
    const int code = run_worker();
    std::fflush(nullptr);
    return code;
  };
  return sandbox::serve_fork_requests(0, hooks);
}

} // namespace kbench::worker
