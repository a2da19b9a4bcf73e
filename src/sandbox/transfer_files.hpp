#pragma once
// The transfer channel's files (docs/architecture.md, "Transfer"). Workers run under
// RLIMIT_FSIZE, so that a hostile candidate cannot fill the disk; a tensor file larger than
// that limit could not be written by the worker at all. The kernel checks the limit on every
// write(2) at an offset past it and on every ftruncate that grows a file, but not on stores
// through a shared mapping of pages the file already has. So the worker asks the orchestrator
// (an interim message, "transfer_file") for a file of the exact length its tensors need; the
// orchestrator, which has no such limit, creates it at that length, and the worker fills it
// through mmap. Every other file the worker writes stays under the limit.
//
// What the orchestrator grants is bounded: only regular files, made afresh, directly in a
// directory reached from one of the worker's roots without following a link (the worker owns
// the directories beneath them and could plant one), and at most `budget_bytes` in all over
// the worker's life.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kbench::sandbox {

// Begins the reason a transfer file was refused for want of room on the scratch filesystem.
// Beside other checks writing GiBs of their own, that is a matter of company, not of the
// problem: `kbench problems check` runs such a check again alone (pipeline/problem_batch.cpp).
inline constexpr const char* kNoScratchRoom = "its filesystem has only";

struct TransferPolicy {
  // Directories the worker may have transfer files made beneath (its writable directories).
  // Empty: the worker is granted none, and writes its files itself, under its limit.
  std::vector<std::filesystem::path> roots;
  // The bytes granted over the worker's life; 0: the machine's physical memory, a bound no
  // legitimate exchange of host copies reaches.
  std::uint64_t budget_bytes = 0;
  // The user the worker runs as (a root kbench): the files become that user's.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
};

class TransferFiles {
public:
  explicit TransferFiles(TransferPolicy policy);

  // The answer to one "transfer_file" message {"path", "bytes", "what"}: {"ok": true} once the
  // file exists at that length, or {"ok": false, "message"} saying which tensor could not be
  // passed, how large it is and what to do; with no roots, {"ok": false, "none_granted": true}
  // (the worker then writes the file itself, under its limit).
  nlohmann::json answer(const nlohmann::json& request);

  std::uint64_t granted_bytes() const { return m_granted; }
  std::uint64_t budget_bytes() const { return m_budget; }

private:
  // "" once `path` exists with `bytes` bytes, else why not.
  std::string make(const std::filesystem::path& path, std::uint64_t bytes);

  TransferPolicy m_policy;
  std::uint64_t m_budget = 0;
  std::uint64_t m_granted = 0;
};

// The message of an interim line that asks for a transfer file, or null.
const nlohmann::json* transfer_request(const nlohmann::json& interim);

} // namespace kbench::sandbox
