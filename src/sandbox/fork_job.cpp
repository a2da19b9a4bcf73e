#include "sandbox/fork_job.hpp"

namespace kbench::sandbox {
namespace {

nlohmann::json encode_filter(const std::vector<sock_filter>& filter) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : filter) {
    out.push_back({f.code, f.jt, f.jf, f.k});
  }
  return out;
}

std::vector<sock_filter> decode_filter(const nlohmann::json& in) {
  std::vector<sock_filter> out;
  for (const auto& f : in) {
    out.push_back(sock_filter{f.at(0).get<__u16>(), f.at(1).get<__u8>(), f.at(2).get<__u8>(),
                              f.at(3).get<__u32>()});
  }
  return out;
}

nlohmann::json optional_limit(const std::optional<rlim_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::optional<rlim_t> limit_of(const nlohmann::json& value) {
  return value.is_null() ? std::nullopt : std::optional<rlim_t>(value.get<rlim_t>());
}

} // namespace

nlohmann::json encode_job(const SpawnSpec& spec, const Prepared& p) {
  nlohmann::json reach = nlohmann::json::array();
  for (const auto& step : p.reach) {
    reach.push_back({step.path, step.mode});
  }
  const auto& l = spec.limits;
  return {
      {"argv", spec.argv},
      {"environment", spec.environment},
      {"working_directory", spec.working_directory.string()},
      {"limits",
       {{"open_files", optional_limit(l.open_files)},
        {"file_size_bytes", optional_limit(l.file_size_bytes)},
        {"cpu_seconds", optional_limit(l.cpu_seconds)},
        {"core_dumps", l.core_dumps}}},
      {"isolate_network", p.isolate_network},
      {"try_plain_netns", p.try_plain_netns},
      {"try_userns", p.try_userns},
      {"uid_map", p.uid_map},
      {"gid_map", p.gid_map},
      {"filter_syscalls", p.filter_syscalls},
      {"filter_plain", encode_filter(p.filter_plain)},
      {"filter_with_socket", encode_filter(p.filter_with_socket)},
      {"landlock_abi", p.landlock_abi},
      {"landlock_self_rights", p.landlock_self_rights},
      {"restrict_filesystem", p.restrict_filesystem},
      {"nproc", optional_limit(p.nproc)},
      {"switch_user", p.switch_user},
      {"uid", p.uid},
      {"gid", p.gid},
      {"reach", reach},
      {"landlock_fd", p.landlock_fd.valid()},
  };
}

void decode_job(const nlohmann::json& job, SpawnSpec& spec, Prepared& p) {
  spec.argv = job.at("argv").get<std::vector<std::string>>();
  spec.environment = job.at("environment").get<std::vector<std::string>>();
  spec.working_directory = job.at("working_directory").get<std::string>();
  const auto& l = job.at("limits");
  spec.limits.open_files = limit_of(l.at("open_files"));
  spec.limits.file_size_bytes = limit_of(l.at("file_size_bytes"));
  spec.limits.cpu_seconds = limit_of(l.at("cpu_seconds"));
  spec.limits.core_dumps = l.at("core_dumps").get<bool>();
  // The process limit was computed by kbench (Prepared::nproc); the spec's margin is not used.
  spec.limits.processes_above_current.reset();
  p.isolate_network = job.at("isolate_network").get<bool>();
  p.try_plain_netns = job.at("try_plain_netns").get<bool>();
  p.try_userns = job.at("try_userns").get<bool>();
  p.uid_map = job.at("uid_map").get<std::string>();
  p.gid_map = job.at("gid_map").get<std::string>();
  p.filter_syscalls = job.at("filter_syscalls").get<bool>();
  p.filter_plain = decode_filter(job.at("filter_plain"));
  p.filter_with_socket = decode_filter(job.at("filter_with_socket"));
  p.landlock_abi = job.at("landlock_abi").get<int>();
  p.landlock_self_rights = job.at("landlock_self_rights").get<std::uint64_t>();
  p.restrict_filesystem = job.at("restrict_filesystem").get<bool>();
  p.nproc = limit_of(job.at("nproc"));
  p.switch_user = job.at("switch_user").get<bool>();
  p.uid = job.at("uid").get<uid_t>();
  p.gid = job.at("gid").get<gid_t>();
  for (const auto& step : job.at("reach")) {
    Prepared::ReachStep r;
    r.path = step.at(0).get<std::string>();
    r.mode = step.at(1).get<int>();
    p.reach.push_back(std::move(r));
  }
}

} // namespace kbench::sandbox
