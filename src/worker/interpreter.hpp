#pragma once
// Starting the embedded CPython of the chosen environment.
#include <filesystem>
#include <string>

namespace kbench::worker {

struct InterpreterSettings {
  std::filesystem::path python;      // the environment's interpreter, e.g. <venv>/bin/python
  std::filesystem::path package_dir; // holds kbench/ and kernelbench/ (put first on sys.path)
};

// The Python version ("3.11") the interpreter at `python` belongs to, read from the name of
// the file it resolves to or from the pyvenv.cfg beside it; empty when it cannot be told.
std::string python_version_of(const std::filesystem::path& python);

// Initialises the interpreter with sys.executable = settings.python, so that torch's extension
// builder, Triton and multiprocessing, which spawn sys.executable, run the same environment.
// Throws std::runtime_error with a message naming what is wrong.
void start_interpreter(const InterpreterSettings& settings);

} // namespace kbench::worker
