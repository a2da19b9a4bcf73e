#include "agent/prompts.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kbench::agent {
namespace fs = std::filesystem;

fs::path Prompts::default_folder() {
  return fs::path(KBENCH_SOURCE_DIR) / "templates" / "agent";
}

Prompts::Prompts(const fs::path& overrides) {
  for (const char* name :
       {"system", "task", "output_cuda", "output_cpu", "reminder", "warning", "final_turn"}) {
    const fs::path mine = overrides.empty() ? fs::path() : overrides / (std::string(name) + ".md");
    const fs::path file =
        !mine.empty() && fs::exists(mine) ? mine : default_folder() / (std::string(name) + ".md");
    std::ifstream in(file);
    if (!in) {
      throw std::runtime_error(
          "cannot read the prompt template " + file.string() +
          (overrides.empty() ? "" : " (--templates " + overrides.string() + ")"));
    }
    std::ostringstream text;
    text << in.rdbuf();
    m_templates[name] = text.str();
  }
}

std::string Prompts::render(const std::string& name,
                            const std::map<std::string, std::string>& values) const {
  std::string text = m_templates.at(name);
  for (const auto& [key, value] : values) {
    const std::string placeholder = "{" + key + "}";
    for (std::size_t at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at + value.size())) {
      text.replace(at, placeholder.size(), value);
    }
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

} // namespace kbench::agent
