// The lines of a killed run's JSON-lines file (sched/jsonl_log.hpp).
#include "sched/jsonl_log.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kbench::sched {

JsonlLog read_jsonl_log(const std::filesystem::path& path, const std::string& document,
                        const std::string& run) {
  JsonlLog log;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return log;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::size_t start = 0;
  for (std::size_t number = 1; start < text.size(); ++number) {
    const std::size_t end = text.find('\n', start);
    const bool complete = end != std::string::npos;
    const std::string line = text.substr(start, complete ? end - start : std::string::npos);
    const std::size_t next = complete ? end + 1 : text.size();
    const bool last = next >= text.size();
    const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    const bool object = !parsed.is_discarded() && parsed.is_object();
    if (!complete || (!object && !blank)) {
      if (!last) {
        throw std::runtime_error(fmt::format(
            "{}:{}: not a {}, and not the last line, so not what a killed {} leaves; fix or "
            "remove the line (or drop --resume to start the file afresh)",
            path.string(), number, document, run));
      }
      log.warnings.push_back(fmt::format(
          "{}:{}: the last line is {}, as a killed {} leaves it; dropped, and its work runs again",
          path.string(), number, complete ? "not a JSON document" : "cut short", run));
      break;
    }
    log.complete_bytes = next;
    start = next;
    if (!blank) {
      log.lines.emplace_back(number, std::move(parsed));
    }
  }
  return log;
}

std::optional<std::string> open_jsonl_for_append(std::ofstream& out,
                                                 const std::filesystem::path& path, bool resume,
                                                 std::uintmax_t complete_bytes) {
  std::error_code ec;
  if (resume && std::filesystem::exists(path, ec)) {
    std::filesystem::resize_file(path, complete_bytes, ec); // drops a cut-short last line
    out.open(path, std::ios::app);
  } else {
    out.open(path);
  }
  if (!out || ec) {
    return ec ? ec.message() : std::string();
  }
  return std::nullopt;
}

} // namespace kbench::sched
