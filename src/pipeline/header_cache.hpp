#pragma once
// kbench's precompiled headers for load_inline builds: torch/extension.h for the binding unit
// (python/kbench/pch.py) and cudafe++'s headers for nvcc's host compile (host_pch.py). A worker
// that finds no entry for its flags asks for one in its build folder; kbench builds the requests
// itself, outside every worker, in the background after the compile, into <cache>/pch and
// <cache>/host-pch, which the workers read and cannot write. docs/architecture.md, "load_inline
// build time".
#include "pipeline/worker_phase.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace kbench {

// <cache_dir>/pch (`cache_dir` empty: the default cache) under KBENCH_PCH=on; nullopt when it is
// unset or `off`. Any other value throws std::invalid_argument naming the choices.
std::optional<std::filesystem::path> pch_root(const std::filesystem::path& cache_dir);

// Whether a worker with these protections may be pointed at the shared headers: only when it
// cannot write them (the filesystem protection confines its writes, or it runs as another user
// than kbench, which owns the entries with mode 0644).
bool pch_safe_for_worker(bool restrict_filesystem, bool runs_as_other_user);

// Points a compile or candidate worker at `root` (KBENCH_PCH_DIR) when that is safe for it;
// returns whether it did (making `root` first). The reference worker never builds candidates.
bool offer_pch(WorkerLaunch& launch, WorkerRole role, const std::filesystem::path& root);

// Whether `extensions_base` (a candidate's build folder, keyed by its source and the build's
// settings) holds a built library already: then the compile request loads it, builds nothing.
bool has_built_library(const std::filesystem::path& extensions_base);

// kbench's precompiled headers for nvcc's host compile (python/kbench/host_pch.py): on by default,
// <cache_dir>/host-pch; nullopt under KBENCH_HOST_PCH=off. Any other value than unset, `on` or
// `off` throws std::invalid_argument naming the choices.
std::optional<std::filesystem::path> host_pch_root(const std::filesystem::path& cache_dir);

// Points a compile or candidate worker at `root` (KBENCH_HOST_PCH_DIR) when that is safe for it
// (pch_safe_for_worker), making `root` first; returns whether it did.
bool offer_host_pch(WorkerLaunch& launch, WorkerRole role, const std::filesystem::path& root);

// kbench's ATen/Functions.h for units built against torch/types.h (python/kbench/aten_subset.py):
// on by default, <cache_dir>/aten-subset; nullopt under KBENCH_ATEN_SUBSET=off. Any other value
// than unset, `on` or `off` throws std::invalid_argument naming the choices.
std::optional<std::filesystem::path> aten_subset_root(const std::filesystem::path& cache_dir);

// Points a compile or candidate worker at `root` (KBENCH_ATEN_SUBSET_DIR) when that is safe for it
// (pch_safe_for_worker); the first time in this process for `root`, builds the entry for the torch
// that `python` imports first (`python -m kbench.aten_subset build`, outside every worker, about
// 2 s once per torch install). Returns whether it offered it.
bool offer_aten_subset(WorkerLaunch& launch, WorkerRole role, const std::filesystem::path& root,
                       const std::filesystem::path& python);

// Builds, in the background (sched/background_helpers.hpp), the entries the compile worker asked
// for under `extensions_base`: `python -m kbench.host_pch build` (`kbench.pch build`), outside
// every worker, checks each request before it builds. Nothing when there is no request.
void build_host_pch_requests(const std::filesystem::path& root, const std::filesystem::path& python,
                             const std::filesystem::path& extensions_base);
void build_pch_requests(const std::filesystem::path& root, const std::filesystem::path& python,
                        const std::filesystem::path& extensions_base);

// The compile request (worker_phase.hpp's compile_candidate); then, when the worker built (the
// build was not cached) and succeeded, the headers it asked for: the host compile's when it was
// offered `host_pch_dir`, the binding unit's when it was offered `pch_dir`.
CompileOutcome
compile_with_pch(sandbox::WorkerClient& worker, const std::optional<std::filesystem::path>& pch_dir,
                 const std::filesystem::path& python, const std::string& candidate_path,
                 const std::filesystem::path& extensions_base, std::chrono::seconds timeout,
                 const std::optional<std::filesystem::path>& host_pch_dir = std::nullopt);

} // namespace kbench
