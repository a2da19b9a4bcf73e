#include "pipeline/environment.hpp"

#include "sandbox/environment.hpp"
#include "sched/helper_command.hpp"

#include <map>
#include <mutex>

namespace kbench {
namespace fs = std::filesystem;

namespace {

// The same reading as the worker's own (python/kbench/worker/handlers.py, _torch_version).
constexpr const char* kReadVersion =
    "import importlib.util, pathlib, re, sys\n"
    "spec = importlib.util.find_spec('torch')\n"
    "if spec is None or not spec.submodule_search_locations: sys.exit(1)\n"
    "text = (pathlib.Path(list(spec.submodule_search_locations)[0]) / 'version.py').read_text()\n"
    "found = re.search(r\"^__version__\\s*=\\s*['\\\"]([^'\\\"]+)['\\\"]\", text, re.M)\n"
    "print(found.group(1) if found else '')\n";

} // namespace

fs::path interpreter_of(const fs::path& python) {
  return python.empty() ? fs::path(KBENCH_DEFAULT_PYTHON) : python;
}

std::string torch_version_of(const fs::path& python) {
  static std::mutex mutex;
  static std::map<fs::path, std::string> known;
  const fs::path interpreter = interpreter_of(python);
  std::lock_guard lock(mutex);
  if (const auto found = known.find(interpreter); found != known.end()) {
    return found->second;
  }
  const auto outcome = sched::run_helper({interpreter.string(), "-c", kReadVersion},
                                         sandbox::to_envp(sandbox::worker_environment({})),
                                         std::chrono::seconds(30));
  std::string version = outcome.exit_code == 0 ? outcome.output : std::string();
  while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) {
    version.pop_back();
  }
  return known[interpreter] = version;
}

} // namespace kbench
