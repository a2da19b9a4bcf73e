#include "measure/activity_summary.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

namespace kbench::measure {
namespace {

double ns_to_us(std::uint64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

std::uint64_t duration_ns(const ActivityRecord& r) {
  return r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0;
}

std::string_view trim_right(std::string_view v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) {
    v.remove_suffix(1);
  }
  return v;
}

// Position of the opener that balances the closer at v.back(), or npos. Only the given pair
// is counted, so "(int)" inside template arguments or "<" inside a parameter list of a lambda
// do not confuse the other.
std::size_t matching_open(std::string_view v, char open, char close) {
  int depth = 0;
  for (std::size_t i = v.size(); i-- > 0;) {
    if (v[i] == close) {
      ++depth;
    } else if (v[i] == open && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// Busy time: the length of the union of [start, end) intervals.
std::uint64_t union_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t total = 0;
  std::uint64_t run_start = 0;
  std::uint64_t run_end = 0;
  bool open = false;
  for (const auto& [start, end] : intervals) {
    if (!open || start > run_end) {
      if (open) {
        total += run_end - run_start;
      }
      run_start = start;
      run_end = end;
      open = true;
    } else {
      run_end = std::max(run_end, end);
    }
  }
  if (open) {
    total += run_end - run_start;
  }
  return total;
}

std::string_view name_or_unknown(const std::string& name) {
  return name.empty() ? std::string_view("unknown") : std::string_view(name);
}

nlohmann::json optional_json(const auto& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

} // namespace

std::string kernel_base_name(const std::string& demangled) {
  std::string_view v = trim_right(demangled);
  // The parameter list, when the name has one ("f(int)"; raw Triton names have none).
  if (!v.empty() && v.back() == ')') {
    if (const auto open = matching_open(v, '(', ')'); open != std::string_view::npos) {
      v = trim_right(v.substr(0, open));
    }
  }
  // Template arguments of the function itself ("f<float, 4>").
  while (!v.empty() && v.back() == '>') {
    const auto open = matching_open(v, '<', '>');
    if (open == std::string_view::npos) {
      break;
    }
    v = trim_right(v.substr(0, open));
  }
  std::size_t begin = v.size();
  while (begin > 0 && identifier_char(v[begin - 1])) {
    --begin;
  }
  return std::string(v.substr(begin));
}

bool is_own_kernel(const std::string& demangled, const std::vector<std::string>& own_names) {
  const std::string base = kernel_base_name(demangled);
  if (base.empty()) {
    return false;
  }
  return std::any_of(own_names.begin(), own_names.end(),
                     [&](const std::string& own) { return kernel_base_name(own) == base; });
}

CallActivity summarize_call(const std::vector<ActivityRecord>& records,
                            std::uint64_t window_start_ns, std::uint64_t window_end_ns,
                            std::uint32_t caller_stream_id,
                            const std::vector<std::string>& own_kernel_names,
                            std::optional<std::uint32_t> legacy_default_stream_id,
                            std::optional<std::uint64_t> caller_done_ns) {
  CallActivity a;
  a.caller_stream_id = caller_stream_id;
  a.legacy_default_stream_id = legacy_default_stream_id;
  a.caller_done_ns = caller_done_ns;

  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
  std::uint64_t first_start = 0;
  std::uint64_t last_end = 0;
  std::optional<std::uint64_t> caller_last_end;
  std::optional<std::uint64_t> other_last_end;
  std::vector<std::pair<std::uint64_t, std::int64_t>> memory_events; // (instant, +/- bytes)

  for (const ActivityRecord& r : records) {
    if (!r.timed()) {
      ++a.untimed_records;
      continue;
    }
    if (r.is_device_work()) {
      if (r.end_ns < window_start_ns || r.start_ns > window_end_ns) {
        continue;
      }
      ++a.records_in_window;
      const std::uint64_t end = std::max(r.start_ns, r.end_ns);
      const double us = ns_to_us(duration_ns(r));
      intervals.emplace_back(r.start_ns, end);
      first_start = intervals.size() == 1 ? r.start_ns : std::min(first_start, r.start_ns);
      last_end = std::max(last_end, end);
      a.streams.insert(r.stream_id);
      auto& stream_end = r.stream_id == caller_stream_id ? caller_last_end : other_last_end;
      stream_end = std::max(stream_end.value_or(0), end);
      if (legacy_default_stream_id && r.stream_id == *legacy_default_stream_id) {
        a.legacy_default_stream = true;
      }
      switch (r.kind) {
      case ActivityRecord::Kind::kernel: {
        ++a.kernel_count;
        a.kernel_us += us;
        NameStats& stats = a.kernels_by_name[r.name];
        ++stats.count;
        stats.total_us += us;
        break;
      }
      case ActivityRecord::Kind::memcpy: {
        ++a.copy_count;
        a.copy_bytes += r.bytes;
        a.copy_us += us;
        CountBytes& kind = a.copies_by_kind[std::string(name_or_unknown(r.name))];
        ++kind.count;
        kind.bytes += r.bytes;
        break;
      }
      default:
        ++a.set_count;
        a.set_bytes += r.bytes;
        a.set_us += us;
        break;
      }
      continue;
    }
    // Allocations and frees are instants.
    if (r.start_ns < window_start_ns || r.start_ns > window_end_ns) {
      continue;
    }
    ++a.records_in_window;
    const auto bytes = static_cast<std::int64_t>(r.bytes);
    if (r.kind == ActivityRecord::Kind::memory_alloc) {
      ++a.allocation_count;
      a.allocated_bytes += r.bytes;
      CountBytes& kind = a.allocations_by_memory_kind[std::string(name_or_unknown(r.name))];
      ++kind.count;
      kind.bytes += r.bytes;
      memory_events.emplace_back(r.start_ns, bytes);
    } else {
      ++a.free_count;
      a.freed_bytes += r.bytes;
      memory_events.emplace_back(r.start_ns, -bytes);
    }
  }

  if (!intervals.empty()) {
    a.first_start_ns = first_start;
    a.last_end_ns = last_end;
    a.device_us = ns_to_us(last_end - first_start);
    a.busy_us = ns_to_us(union_ns(std::move(intervals)));
  }
  if (other_last_end) {
    a.off_caller_stream_work = true;
    // Work on the caller's stream always ends before caller_done_ns (the event was recorded
    // after it); other streams' work does only when the caller's stream waited for it.
    const std::uint64_t done = caller_done_ns    ? *caller_done_ns
                               : caller_last_end ? *caller_last_end
                                                 : first_start;
    if (*other_last_end > done) {
      a.unjoined_stream_work = true;
      a.unjoined_tail_us = ns_to_us(*other_last_end - done);
    }
  }

  // At one instant allocations go first, so a peak is never hidden by a free at the same time.
  std::sort(memory_events.begin(), memory_events.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  });
  std::int64_t net = 0;
  std::int64_t peak = 0;
  for (const auto& [instant, delta] : memory_events) {
    net += delta;
    peak = std::max(peak, net);
  }
  a.peak_net_allocated_bytes = static_cast<std::uint64_t>(peak);

  if (!own_kernel_names.empty()) {
    for (const auto& [name, stats] : a.kernels_by_name) {
      if (is_own_kernel(name, own_kernel_names)) {
        a.own_kernel_count += stats.count;
        a.own_kernel_us += stats.total_us;
      }
    }
  }
  a.own_kernel_share = a.kernel_us > 0 ? a.own_kernel_us / a.kernel_us : 0.0;
  return a;
}

nlohmann::json CallActivity::to_json() const {
  nlohmann::json kernels = nlohmann::json::object();
  for (const auto& [name, stats] : kernels_by_name) {
    kernels[name] = {{"count", stats.count}, {"total_us", stats.total_us}};
  }
  auto count_bytes = [](const std::map<std::string, CountBytes>& by_kind) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [kind, cb] : by_kind) {
      out[kind] = {{"count", cb.count}, {"bytes", cb.bytes}};
    }
    return out;
  };
  return {
      {"device_us", device_us},
      {"busy_us", busy_us},
      {"kernel_us", kernel_us},
      {"copy_us", copy_us},
      {"set_us", set_us},
      {"first_start_ns", optional_json(first_start_ns)},
      {"last_end_ns", optional_json(last_end_ns)},
      {"kernel_count", kernel_count},
      {"kernels_by_name", kernels},
      {"copy_count", copy_count},
      {"copy_bytes", copy_bytes},
      {"copies_by_kind", count_bytes(copies_by_kind)},
      {"set_count", set_count},
      {"set_bytes", set_bytes},
      {"allocation_count", allocation_count},
      {"free_count", free_count},
      {"allocated_bytes", allocated_bytes},
      {"freed_bytes", freed_bytes},
      {"peak_net_allocated_bytes", peak_net_allocated_bytes},
      {"allocations_by_memory_kind", count_bytes(allocations_by_memory_kind)},
      {"caller_stream_id", caller_stream_id},
      {"streams", streams},
      {"off_caller_stream_work", off_caller_stream_work},
      {"caller_done_ns", optional_json(caller_done_ns)},
      {"unjoined_stream_work", unjoined_stream_work},
      {"unjoined_tail_us", unjoined_tail_us},
      {"legacy_default_stream_id", optional_json(legacy_default_stream_id)},
      {"legacy_default_stream", legacy_default_stream},
      {"own_kernel_count", own_kernel_count},
      {"own_kernel_us", own_kernel_us},
      {"own_kernel_share", own_kernel_share},
      {"records_in_window", records_in_window},
      {"untimed_records", untimed_records},
  };
}

} // namespace kbench::measure
