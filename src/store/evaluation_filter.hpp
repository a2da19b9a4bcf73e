#pragma once
// The filters of `kbench export --where` and of the service's listings: `FIELD OP VALUE`, where
// FIELD is one of the store's indexed columns (not SQL: the value is always a bound parameter),
// OP one of = != < <= > >= and ~ (contains). Several conditions all hold. A bad condition is an
// error that names it and lists the fields.
#include "store/sqlite.hpp"

#include <string>
#include <vector>

namespace kbench::store {

struct Condition {
  std::string field; // as the user wrote it: "status", "speedup", "flag"
  std::string op;    // "=", "!=", "<", "<=", ">", ">=", "~"
  std::string value;
};

struct EvaluationFilter {
  std::vector<Condition> conditions;
};

// "status=ok", "speedup>=1.5", "problem~relu", "flag=launch_bound". Throws StoreError naming
// the condition when the field, the operator or a number is wrong.
Condition parse_condition(const std::string& text);
EvaluationFilter parse_filter(const std::vector<std::string>& texts);

// The filterable fields, for help texts and error messages.
const std::vector<std::string>& filter_fields();

// " AND ..." clauses over the evaluations table (empty for no condition), and binding their
// values from parameter `first` on; returns the next free parameter index.
std::string filter_sql(const EvaluationFilter& filter);
int bind_filter(Statement& statement, const EvaluationFilter& filter, int first);

} // namespace kbench::store
