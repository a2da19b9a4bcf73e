#include "store/evaluation_filter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <charconv>
#include <map>

namespace kbench::store {
namespace {

enum class Kind { text, number, flag };

struct Field {
  const char* column;
  Kind kind;
};

const std::map<std::string, Field>& fields() {
  static const std::map<std::string, Field> all = {
      {"id", {"id", Kind::text}},
      {"key", {"key", Kind::text}},
      {"origin", {"origin", Kind::text}},
      {"suite", {"suite_id", Kind::number}},
      {"created_at", {"created_at", Kind::text}},
      {"problem", {"problem_path", Kind::text}},
      {"candidate", {"candidate_path", Kind::text}},
      {"problem_sha256", {"problem_sha256", Kind::text}},
      {"candidate_sha256", {"candidate_sha256", Kind::text}},
      {"status", {"status", Kind::text}},
      {"device", {"device", Kind::text}},
      {"device_name", {"device_name", Kind::text}},
      {"torch_version", {"torch_version", Kind::text}},
      {"kbench_version", {"kbench_version", Kind::text}},
      {"variant", {"variant", Kind::text}},
      {"precision", {"precision", Kind::text}},
      {"speedup", {"speedup", Kind::number}},
      {"speedup_vs_compiled", {"speedup_vs_compiled", Kind::number}},
      {"reference_median_us", {"reference_median_us", Kind::number}},
      {"candidate_median_us", {"candidate_median_us", Kind::number}},
      {"wall_s", {"wall_s", Kind::number}},
      {"flag", {"flags", Kind::flag}},
  };
  return all;
}

// The operators, longest first so that "<=" is not read as "<".
constexpr std::array<const char*, 7> kOperators = {"!=", "<=", ">=", "=", "<", ">", "~"};

std::string escape_like(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '%' || c == '_' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

} // namespace

const std::vector<std::string>& filter_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, _] : fields()) {
      out.push_back(name);
    }
    return out;
  }();
  return names;
}

Condition parse_condition(const std::string& text) {
  // The first operator from the left; at one position the longest ("<=" before "<").
  std::size_t at = std::string::npos;
  std::string op;
  for (std::size_t i = 0; i < text.size() && at == std::string::npos; ++i) {
    for (const char* candidate : kOperators) {
      if (text.compare(i, std::char_traits<char>::length(candidate), candidate) == 0) {
        at = i;
        op = candidate;
        break;
      }
    }
  }
  const auto list = fmt::format("{}", fmt::join(filter_fields(), ", "));
  if (at == std::string::npos || at == 0) {
    throw StoreError(fmt::format(
        "--where {:?}: expected FIELD OP VALUE (OP one of = != < <= > >= ~), e.g. status=ok or "
        "speedup>=1.5; fields: {}",
        text, list));
  }
  Condition condition{text.substr(0, at), op, text.substr(at + op.size())};
  const auto field = fields().find(condition.field);
  if (field == fields().end()) {
    throw StoreError(
        fmt::format("--where {:?}: no field {:?}; fields: {}", text, condition.field, list));
  }
  if (field->second.kind == Kind::number && op != "~") {
    double number = 0;
    const auto* end = condition.value.data() + condition.value.size();
    const auto parsed = std::from_chars(condition.value.data(), end, number);
    if (condition.value.empty() || parsed.ec != std::errc() || parsed.ptr != end) {
      throw StoreError(fmt::format("--where {:?}: {} takes a number, got {:?}", text,
                                   condition.field, condition.value));
    }
  }
  if (field->second.kind == Kind::number && op == "~") {
    throw StoreError(fmt::format("--where {:?}: ~ (contains) is for text fields; {} is a number",
                                 text, condition.field));
  }
  if (field->second.kind == Kind::flag && op != "=" && op != "!=") {
    throw StoreError(fmt::format(
        "--where {:?}: flag takes = (has the flag) or != (has not), e.g. flag=launch_bound", text));
  }
  return condition;
}

EvaluationFilter parse_filter(const std::vector<std::string>& texts) {
  EvaluationFilter filter;
  for (const auto& text : texts) {
    filter.conditions.push_back(parse_condition(text));
  }
  return filter;
}

std::string filter_sql(const EvaluationFilter& filter) {
  std::string sql;
  for (const auto& condition : filter.conditions) {
    const Field& field = fields().at(condition.field);
    if (field.kind == Kind::flag) {
      sql += fmt::format(" AND flags {}LIKE ? ESCAPE '\\'", condition.op == "=" ? "" : "NOT ");
    } else if (condition.op == "~") {
      sql += fmt::format(" AND {} LIKE ? ESCAPE '\\'", field.column);
    } else {
      sql += fmt::format(" AND {} {} ?", field.column, condition.op == "!=" ? "<>" : condition.op);
    }
  }
  return sql;
}

int bind_filter(Statement& statement, const EvaluationFilter& filter, int first) {
  int index = first;
  for (const auto& condition : filter.conditions) {
    const Field& field = fields().at(condition.field);
    if (field.kind == Kind::flag) {
      statement.bind(index++, "% " + escape_like(condition.value) + " %");
    } else if (condition.op == "~") {
      statement.bind(index++, "%" + escape_like(condition.value) + "%");
    } else if (field.kind == Kind::number) {
      statement.bind(index++, std::stod(condition.value));
    } else {
      statement.bind(index++, condition.value);
    }
  }
  return index;
}

} // namespace kbench::store
