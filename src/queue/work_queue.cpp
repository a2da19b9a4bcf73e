#include "queue/work_queue.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>

namespace kbench::queue {
namespace {

// A stream entry [id, [field, value, ...]] as (id, fields).
std::pair<std::string, std::map<std::string, std::string>> entry_of(const Reply& entry) {
  std::map<std::string, std::string> fields;
  const Reply& values = entry.at(1);
  for (std::size_t i = 0; i + 1 < values.elements.size(); i += 2) {
    fields[values.elements[i].text] = values.elements[i + 1].text;
  }
  return {entry.at(0).text, fields};
}

std::string field(const std::map<std::string, std::string>& fields, const char* name) {
  const auto found = fields.find(name);
  return found == fields.end() ? "" : found->second;
}

double now_unix_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

WorkQueue::WorkQueue(QueueAddress address, double give_up_s)
    : m_redis(std::move(address), give_up_s) {}

void WorkQueue::ensure_group() {
  try {
    m_redis.command({"XGROUP", "CREATE", m_redis.address().stream, kGroup, "0", "MKSTREAM"});
  } catch (const RedisError& error) {
    if (std::string(error.what()).find("BUSYGROUP") == std::string::npos) {
      throw;
    }
  }
}

std::string WorkQueue::enqueue(const std::string& job_id, const nlohmann::json& job) {
  return m_redis.command({"XADD", m_redis.address().stream, "*", "id", job_id, "job", job.dump()})
      .text;
}

std::optional<Claimed> WorkQueue::claim(const std::string& consumer, double min_idle_s,
                                        int block_ms) {
  const std::string& stream = m_redis.address().stream;
  auto claimed_from = [&](const Reply& entry, long long deliveries) -> std::optional<Claimed> {
    const auto [id, fields] = entry_of(entry);
    Claimed out;
    out.entry_id = id;
    out.job_id = field(fields, "id");
    out.job = nlohmann::json::parse(field(fields, "job"), nullptr, false);
    out.deliveries = deliveries;
    return out;
  };
  // A stopped worker's job first: XAUTOCLAIM counts the delivery.
  const Reply taken = m_redis.command({"XAUTOCLAIM", stream, kGroup, consumer,
                                       std::to_string(static_cast<long long>(min_idle_s * 1000)),
                                       "0-0", "COUNT", "1"});
  if (taken.elements.size() >= 2 && !taken.at(1).elements.empty() && !taken.at(1).at(0).is_nil()) {
    const Reply& entry = taken.at(1).at(0);
    const Reply pending =
        m_redis.command({"XPENDING", stream, kGroup, entry.at(0).text, entry.at(0).text, "1"});
    const long long deliveries = pending.elements.empty() ? 1 : pending.at(0).at(3).integer;
    return claimed_from(entry, deliveries);
  }
  const Reply read = m_redis.command({"XREADGROUP", "GROUP", kGroup, consumer, "COUNT", "1",
                                      "BLOCK", std::to_string(block_ms), "STREAMS", stream, ">"});
  if (read.is_nil() || read.elements.empty() || read.at(0).at(1).elements.empty()) {
    return std::nullopt;
  }
  return claimed_from(read.at(0).at(1).at(0), 1);
}

void WorkQueue::touch(const std::string& consumer, const std::string& entry_id) {
  m_redis.command({"XCLAIM", m_redis.address().stream, kGroup, consumer, "0", entry_id, "JUSTID"});
}

void WorkQueue::ack(const std::string& entry_id) {
  m_redis.command({"XACK", m_redis.address().stream, kGroup, entry_id});
}

long long WorkQueue::pending_count() {
  const Reply summary = m_redis.command({"XPENDING", m_redis.address().stream, kGroup});
  return summary.elements.empty() ? 0 : summary.at(0).integer;
}

std::vector<std::string> WorkQueue::pending_jobs_of(const std::string& consumer) {
  const std::string& stream = m_redis.address().stream;
  std::vector<std::string> out;
  const Reply pending = m_redis.command({"XPENDING", stream, kGroup, "-", "+", "1000", consumer});
  for (const auto& entry : pending.elements) {
    const std::string& id = entry.at(0).text;
    for (const auto& found : m_redis.command({"XRANGE", stream, id, id}).elements) {
      out.push_back(field(entry_of(found).second, "id"));
    }
  }
  return out;
}

void WorkQueue::post_result(const std::string& job_id, const std::string& worker,
                            const nlohmann::json& result) {
  m_redis.command(
      {"XADD", key(":results"), "*", "id", job_id, "worker", worker, "result", result.dump()});
}

void WorkQueue::dead_letter(const Claimed& job, const std::string& error) {
  m_redis.command({"XADD", key(":dead"), "*", "id", job.job_id, "job", job.job.dump(), "error",
                   error, "attempts", std::to_string(job.deliveries)});
}

std::string WorkQueue::results_tail() {
  const Reply last = m_redis.command({"XREVRANGE", key(":results"), "+", "-", "COUNT", "1"});
  return last.elements.empty() ? "0-0" : last.at(0).at(0).text;
}

std::vector<ResultEntry> WorkQueue::read_results(std::string& after, int block_ms) {
  const Reply read = m_redis.command({"XREAD", "COUNT", "500", "BLOCK", std::to_string(block_ms),
                                      "STREAMS", key(":results"), after});
  std::vector<ResultEntry> out;
  if (read.is_nil() || read.elements.empty()) {
    return out;
  }
  for (const auto& entry : read.at(0).at(1).elements) {
    const auto [id, fields] = entry_of(entry);
    out.push_back({id, field(fields, "id"), field(fields, "worker"),
                   nlohmann::json::parse(field(fields, "result"), nullptr, false)});
    after = id;
  }
  return out;
}

void WorkQueue::heartbeat(const std::string& worker, const nlohmann::json& beat) {
  nlohmann::json stamped = beat;
  stamped["at_unix_s"] = now_unix_s();
  m_redis.command({"HSET", key(":workers"), worker, stamped.dump()});
}

void WorkQueue::forget_worker(const std::string& worker) {
  m_redis.command({"HDEL", key(":workers"), worker});
}

QueueStatus WorkQueue::status() {
  QueueStatus s;
  const std::string& stream = m_redis.address().stream;
  s.jobs = m_redis.command({"XLEN", stream}).integer;
  s.results = m_redis.command({"XLEN", key(":results")}).integer;
  s.dead = m_redis.command({"XLEN", key(":dead")}).integer;
  try {
    const Reply groups = m_redis.command({"XINFO", "GROUPS", stream});
    for (const auto& group : groups.elements) {
      std::map<std::string, const Reply*> info;
      for (std::size_t i = 0; i + 1 < group.elements.size(); i += 2) {
        info[group.elements[i].text] = &group.elements[i + 1];
      }
      if (info.count("name") && info["name"]->text == kGroup) {
        s.pending = info.count("pending") ? info["pending"]->integer : 0;
        // Redis 7: "lag", the entries not yet delivered to the group.
        s.waiting = info.count("lag") && !info["lag"]->is_nil() ? info["lag"]->integer : 0;
      }
    }
    const Reply consumers = m_redis.command({"XINFO", "CONSUMERS", stream, kGroup});
    for (const auto& consumer : consumers.elements) {
      ConsumerPending c;
      for (std::size_t i = 0; i + 1 < consumer.elements.size(); i += 2) {
        const std::string& name = consumer.elements[i].text;
        if (name == "name") {
          c.name = consumer.elements[i + 1].text;
        } else if (name == "pending") {
          c.pending = consumer.elements[i + 1].integer;
        } else if (name == "idle") {
          c.idle_ms = consumer.elements[i + 1].integer;
        }
      }
      s.consumers.push_back(c);
    }
  } catch (const RedisError&) {
    // no group yet: nothing was ever claimed
  }
  for (const auto& entry :
       m_redis.command({"XREVRANGE", key(":dead"), "+", "-", "COUNT", "10"}).elements) {
    const auto [id, fields] = entry_of(entry);
    s.dead_letters.push_back({{"entry", id},
                              {"id", field(fields, "id")},
                              {"error", field(fields, "error")},
                              {"attempts", field(fields, "attempts")}});
  }
  const Reply workers = m_redis.command({"HGETALL", key(":workers")});
  for (std::size_t i = 0; i + 1 < workers.elements.size(); i += 2) {
    s.workers.emplace_back(workers.elements[i].text,
                           nlohmann::json::parse(workers.elements[i + 1].text, nullptr, false));
  }
  // Results in the last 5 minutes: stream ids start with their millisecond time.
  const auto since_ms = static_cast<long long>((now_unix_s() - 300) * 1000);
  const Reply recent =
      m_redis.command({"XRANGE", key(":results"), std::to_string(since_ms), "+", "COUNT", "10000"});
  s.results_per_minute = static_cast<double>(recent.elements.size()) / 5.0;
  return s;
}

} // namespace kbench::queue
