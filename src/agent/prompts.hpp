#pragma once
// The agent's prompts, from template files a user can edit (templates/agent/ in the repository;
// --templates DIR takes a folder whose files override them one by one): system.md, task.md
// (the reference source goes in), output_cuda.md / output_cpu.md (the output format for the
// device), reminder.md (a turn without a tool call), warning.md (two turns before the end) and
// final_turn.md. `{name}` placeholders are filled from a map; any other text is kept as written.
#include <filesystem>
#include <map>
#include <string>

namespace kbench::agent {

class Prompts {
public:
  // Reads every template (each from `overrides` when it has the file); throws
  // std::runtime_error naming a file that cannot be read.
  explicit Prompts(const std::filesystem::path& overrides = {});
  static std::filesystem::path default_folder();
  // The template `name` ("system", "task", ...) with its placeholders filled.
  std::string render(const std::string& name,
                     const std::map<std::string, std::string>& values) const;

private:
  std::map<std::string, std::string> m_templates;
};

} // namespace kbench::agent
