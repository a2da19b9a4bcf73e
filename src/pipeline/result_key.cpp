#include "pipeline/result_key.hpp"

#include "pipeline/environment.hpp"
#include "pipeline/worker_phase.hpp"
#include "sched/suite_keys.hpp"

namespace kbench {

std::optional<std::string> store_key(const EvalOptions& run) {
  const auto key = sched::evaluation_key(run);
  if (!key) {
    return std::nullopt;
  }
  const DeviceChoice choice = choose_device(run.device, run.gpu, std::max(1, run.world_size));
  return sched::content_key(*key, choice.device_name, torch_version_of(run.python));
}

} // namespace kbench
