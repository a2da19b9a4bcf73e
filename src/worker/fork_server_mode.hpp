#pragma once
// kbench-worker --fork-server: imports torch and kbench's worker modules once, without CUDA,
// then forks a child per job (sandbox/fork_server.hpp). Each child takes over its launch
// environment and runs `run_worker`, as a spawned worker does after exec.
#include <filesystem>
#include <functional>

namespace kbench::worker {

// The protocol loop of a started worker (spawned or forked): the response channel moved off
// fd 3, then requests until the orchestrator stops. Returns the exit code. Holds the GIL.
int run_worker();

// Runs the server on its control socket (fd 0); `python` is the interpreter whose directory
// leads PATH in each child, as in a spawned worker. Returns the exit code.
int run_fork_server(const std::filesystem::path& python);

// PATH as a worker sees it: the interpreter's directory first (ninja for torch's builder).
std::string worker_path(const std::filesystem::path& python, const char* path);

} // namespace kbench::worker
