// kbench export: stored evaluations as JSON Lines (the result documents) or CSV (their columns).
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"
#include "report/csv.hpp"
#include "store/row_columns.hpp"
#include "store/store.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>
#include <memory>

namespace kbench::cli {

Command register_export_command(CLI::App& app) {
  auto* command = app.add_subcommand("export", "write stored evaluations as JSON Lines or CSV");
  auto db = std::make_shared<std::filesystem::path>();
  auto format = std::make_shared<std::string>("jsonl");
  auto where = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  add_db_flag(*command, *db);
  command->add_option("--format", *format, "jsonl (the result documents) or csv (their columns)")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();
  command->add_option(
      "--where", *where,
      fmt::format("keep the evaluations where FIELD OP VALUE holds (OP: = != < <= > "
                  ">= ~ for contains; repeat for several, all must hold), e.g. "
                  "--where status=ok --where speedup>=1.5. Fields: {}",
                  fmt::join(store::filter_fields(), ", ")));
  command->add_option("--out", *out, "write here instead of standard output");
  const auto run = [db, format, where, out]() -> int {
    try {
      const auto filter = store::parse_filter(*where);
      store::Store results(db->empty() ? store::Store::default_path() : *db, false);
      std::ofstream file;
      if (!out->empty()) {
        file.open(*out, std::ios::binary | std::ios::trunc);
        if (!file) {
          std::cerr << "kbench export: cannot write " << *out << "\n";
          return 2;
        }
      }
      std::ostream& sink = out->empty() ? std::cout : file;
      if (*format == "csv") {
        sink << report::csv_line(store::row_column_names());
      }
      std::size_t count = 0;
      results.each_evaluation(
          filter, [&](const store::EvaluationRow& row, const std::string& document) {
            sink << (*format == "csv" ? report::csv_line(store::row_values(row)) : document + "\n");
            ++count;
          });
      sink.flush();
      std::cerr << fmt::format("kbench export: {} evaluation(s) from {}\n", count,
                               results.path().string());
      return sink ? 0 : 2;
    } catch (const store::StoreError& error) {
      std::cerr << "kbench export: " << error.what() << "\n";
      return std::string(error.what()).rfind("--where", 0) == 0 ? 64 : 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
