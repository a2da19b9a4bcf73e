#include "sandbox/worker_user.hpp"

#include <fmt/format.h>

#include <charconv>
#include <grp.h>
#include <pwd.h>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace kbench::sandbox {
namespace {

std::optional<unsigned long> as_number(std::string_view text) {
  unsigned long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// The passwd entry of a name or a uid: {uid, primary gid, name}, or none.
struct Entry {
  unsigned long id = 0;
  unsigned long group = 0;
  std::string name;
};

std::optional<Entry> user_entry(const std::string& name_or_id) {
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  const auto number = as_number(name_or_id);
  const int error =
      number ? getpwuid_r(static_cast<uid_t>(*number), &entry, buffer.data(), buffer.size(), &found)
             : getpwnam_r(name_or_id.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (error != 0 || !found) {
    return std::nullopt;
  }
  return Entry{entry.pw_uid, entry.pw_gid, entry.pw_name};
}

std::optional<unsigned long> group_id(const std::string& name_or_id) {
  if (const auto number = as_number(name_or_id)) {
    return number;
  }
  group entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  if (getgrnam_r(name_or_id.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return std::nullopt;
  }
  return entry.gr_gid;
}

[[noreturn]] void invalid(const std::string& setting, const std::string& why) {
  throw std::runtime_error(fmt::format(
      "{}={}: {}; use a user name or uid, optionally with :GROUP (a name or gid), or root to "
      "keep workers as root",
      kWorkerUserVariable, setting, why));
}

} // namespace

std::string WorkerUser::describe() const {
  return fmt::format("{} (uid {}, gid {})", name, uid, gid);
}

UserChoice choose_worker_user(const char* setting, uid_t euid) {
  UserChoice choice;
  if (euid != 0) {
    return choice;
  }
  const std::string value = setting ? setting : "";
  if (value == "root" || value == "0" || value == "0:0") {
    choice.stays_root = fmt::format("{}={} keeps workers as root", kWorkerUserVariable, value);
    return choice;
  }
  if (value.empty() || value == "nobody") {
    WorkerUser user;
    if (const auto entry = user_entry("nobody")) {
      user.uid = static_cast<uid_t>(entry->id);
      user.gid = static_cast<gid_t>(entry->group);
      user.name = entry->name;
    } else {
      user.name = "nobody";
    }
    if (user.uid == 0 || user.gid == 0) {
      invalid("nobody", "this system's nobody has uid or gid 0");
    }
    choice.user = user;
    return choice;
  }
  const auto colon = value.find(':');
  const std::string user_part = value.substr(0, colon);
  const auto entry = user_entry(user_part);
  const auto number = as_number(user_part);
  if (!entry && !number) {
    invalid(value, fmt::format("no user named '{}' on this system", user_part));
  }
  WorkerUser user;
  user.uid = static_cast<uid_t>(entry ? entry->id : *number);
  user.name = entry ? entry->name : user_part;
  // A uid without a passwd entry gets the group of the same number, as container images do.
  unsigned long gid = entry ? entry->group : *number;
  if (colon != std::string::npos) {
    const std::string group_part = value.substr(colon + 1);
    const auto group = group_id(group_part);
    if (!group) {
      invalid(value, fmt::format("no group named '{}' on this system", group_part));
    }
    gid = *group;
  }
  user.gid = static_cast<gid_t>(gid);
  if (user.uid == 0) {
    invalid(value, fmt::format("'{}' is uid 0, which is root", user_part));
  }
  if (user.gid == 0) {
    invalid(value, "its group is gid 0 (root's group, which owns files the worker must not "
                   "write)");
  }
  choice.user = user;
  return choice;
}

} // namespace kbench::sandbox
