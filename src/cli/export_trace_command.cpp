// kbench export-trace RUN_ID: a stored agent run as JSON Lines events (`jsonl`) or as the Claude
// Code session lines Hugging Face's agent-trace viewer reads (`hf`).
#include "agent/trace.hpp"
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"

#include <fstream>
#include <iostream>
#include <memory>

namespace kbench::cli {

Command register_export_trace_command(CLI::App& app) {
  auto* command = app.add_subcommand("export-trace", "write a stored agent run's trace");
  auto id = std::make_shared<std::string>();
  auto db = std::make_shared<std::filesystem::path>();
  auto format = std::make_shared<std::string>("jsonl");
  auto out = std::make_shared<std::string>();
  command->add_option("run", *id, "the run's id, or the start of it")->required();
  add_db_flag(*command, *db);
  command->add_option("--format", *format, "jsonl (events) or hf (Hugging Face's trace viewer)")
      ->check(CLI::IsMember({"jsonl", "hf"}))
      ->capture_default_str();
  command->add_option("--out", *out, "write here instead of standard output");
  const auto run = [id, db, format, out]() -> int {
    try {
      store::Store results(db->empty() ? store::Store::default_path() : *db, false);
      const auto trace = agent::load_trace(results, *id);
      const auto lines =
          *format == "hf" ? agent::hf_trace_lines(trace) : agent::trace_events(trace, results);
      std::ofstream file;
      if (!out->empty()) {
        file.open(*out, std::ios::trunc);
        if (!file) {
          std::cerr << "kbench export-trace: cannot write " << *out << "\n";
          return 2;
        }
      }
      std::ostream& sink = out->empty() ? std::cout : file;
      for (const auto& line : lines) {
        sink << line.dump() << "\n";
      }
      return sink ? 0 : 2;
    } catch (const std::exception& error) {
      std::cerr << "kbench export-trace: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
