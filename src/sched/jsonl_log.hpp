#pragma once
// The lines of a JSON-lines file that a killed run may have cut short: `kbench suite --resume`
// and `kbench problems check --resume` read back what an earlier run appended, each line as it
// finished. Pure apart from reading the file.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbench::sched {

struct JsonlLog {
  std::vector<std::pair<std::size_t, nlohmann::json>> lines; // line number, object
  std::vector<std::string> warnings; // the dropped last line, said with its file and number
  // Bytes of the file up to the end of its last complete line: a resumed run cuts the file
  // there before it appends, so the dropped partial line does not stay glued to a new one.
  std::uintmax_t complete_bytes = 0;
};

// Reads `path` (a missing file is an empty log; blank lines are skipped). A last line without
// its newline, or that is not a JSON object, is dropped with a warning naming the file and the
// line. A bad line before the last is not something a killed run leaves: it throws
// std::runtime_error naming the file and the line, so a person looks at the file before kbench
// appends to it. `document` names what a line holds ("result document"), `run` what wrote the
// file ("suite"), for those messages.
JsonlLog read_jsonl_log(const std::filesystem::path& path, const std::string& document,
                        const std::string& run);

// Opens `path` for a run's lines: a resumed run (`resume`, the file there) cuts it at
// `complete_bytes` (JsonlLog) and appends; any other run starts it afresh. Returns nullopt when
// `out` is ready, else why not (empty when the stream gave no reason).
std::optional<std::string> open_jsonl_for_append(std::ofstream& out,
                                                 const std::filesystem::path& path, bool resume,
                                                 std::uintmax_t complete_bytes);

} // namespace kbench::sched
