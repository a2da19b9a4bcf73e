#include "worker/interpreter.hpp"

#include <Python.h>

#include <fstream>
#include <regex>
#include <stdexcept>

namespace kbench::worker {

namespace fs = std::filesystem;

std::string python_version_of(const fs::path& python) {
  std::error_code error;
  const fs::path resolved = fs::canonical(python, error);
  static const std::regex versioned(R"(python(\d+\.\d+))");
  std::smatch match;
  const std::string name = (error ? python : resolved).filename().string();
  if (std::regex_search(name, match, versioned)) {
    return match[1];
  }
  // A venv: pyvenv.cfg one level above bin/ records the base interpreter's version.
  std::ifstream config(python.parent_path().parent_path() / "pyvenv.cfg");
  static const std::regex version_line(R"(^\s*version(_info)?\s*=\s*(\d+\.\d+))");
  for (std::string line; std::getline(config, line);) {
    if (std::regex_search(line, match, version_line)) {
      return match[2];
    }
  }
  return {};
}

static void check(PyStatus status, const char* what) {
  if (PyStatus_Exception(status)) {
    throw std::runtime_error(std::string("cannot start the embedded Python (") + what +
                             "): " + (status.err_msg ? status.err_msg : "unknown error"));
  }
}

void start_interpreter(const InterpreterSettings& settings) {
  if (!fs::exists(settings.python)) {
    throw std::runtime_error("the Python interpreter " + settings.python.string() +
                             " does not exist; pass --python or set KBENCH_PYTHON");
  }
  const std::string linked =
      std::to_string(PY_MAJOR_VERSION) + "." + std::to_string(PY_MINOR_VERSION);
  const std::string wanted = python_version_of(settings.python);
  if (!wanted.empty() && wanted != linked) {
    throw std::runtime_error("kbench-worker embeds Python " + linked + " but " +
                             settings.python.string() + " is Python " + wanted +
                             "; rebuild kbench against that environment (scripts/setup.sh)");
  }

  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;
  config.install_signal_handlers = 1;
  config.user_site_directory = 0;
  config.write_bytecode = 0;
  check(PyConfig_SetBytesString(&config, &config.executable, settings.python.c_str()),
        "executable");
  check(PyConfig_SetBytesString(&config, &config.program_name, settings.python.c_str()),
        "program name");
  const PyStatus status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  check(status, "initialisation");

  // Our package first: problems import `kernelbench`, the worker imports `kbench`.
  PyObject* sys_path = PySys_GetObject("path"); // borrowed
  PyObject* dir = PyUnicode_DecodeFSDefault(settings.package_dir.c_str());
  if (!sys_path || !dir || PyList_Insert(sys_path, 0, dir) != 0) {
    Py_XDECREF(dir);
    throw std::runtime_error("cannot put " + settings.package_dir.string() + " on sys.path");
  }
  Py_DECREF(dir);
}

} // namespace kbench::worker
