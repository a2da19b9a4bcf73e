#include "core/options.hpp"

#include <algorithm>

namespace kbench {
namespace {

// Both directions list the fields in the struct's order, so a field added to one and not the
// other shows in a diff of these two functions (and in tests/unit/test_options.cpp).
nlohmann::json path_json(const std::filesystem::path& path) {
  return path.string();
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

EvalOptions read_options(const JsonObjectReader& in) {
  EvalOptions o;
  in.read("problem", o.problem);
  in.read("candidate", o.candidate);
  in.read("device", o.device);
  in.read("gpu", o.gpu);
  in.read("world_size", o.world_size);
  in.read("trials", o.trials);
  in.read("seed", o.seed);
  in.read("variant", o.variant);
  in.read("precision", o.precision);
  in.read("atol", o.atol);
  in.read("rtol", o.rtol);
  auto seconds = [&](const char* key, std::chrono::seconds& out) {
    if (const nlohmann::json* value = in.find(key)) {
      if (!value->is_number_integer()) {
        throw_field_error(in.path_of(key), "an integer (seconds)", *value);
      }
      out = std::chrono::seconds(in.convert<std::int64_t>(*value, in.path_of(key)));
    }
  };
  seconds("compile_timeout", o.compile_timeout);
  seconds("run_timeout", o.run_timeout);
  in.read("no_timing", o.no_timing);
  in.read("warmup", o.warmup);
  in.read("iterations", o.iterations);
  in.read("min_samples", o.min_samples);
  in.read("timing_precision", o.timing_precision);
  in.read("min_time", o.min_time);
  in.read("timing_timeout", o.timing_timeout);
  in.read("throttle_recovery", o.throttle_recovery);
  in.read("warm", o.warm);
  in.read("no_compile_baseline", o.no_compile_baseline);
  in.read("no_reference_cache", o.no_reference_cache);
  in.read("profile", o.profile);
  in.read("roofline", o.roofline);
  in.read("backend", o.backend);
  in.read("rules", o.rules);
  in.read("python", o.python);
  in.read("cache_dir", o.cache_dir);
  in.read("keep_scratch", o.keep_scratch);
  in.reject_unread("one of the eval flags' names with underscores (min_time for --min-time)");
  return o;
}

} // namespace

nlohmann::json to_json(const EvalOptions& o) {
  return {
      {"problem", path_json(o.problem)},
      {"candidate", path_json(o.candidate)},
      {"device", o.device},
      {"gpu", o.gpu},
      {"world_size", o.world_size},
      {"trials", o.trials},
      {"seed", o.seed},
      {"variant", o.variant},
      {"precision", o.precision},
      {"atol", optional_json(o.atol)},
      {"rtol", optional_json(o.rtol)},
      {"compile_timeout", o.compile_timeout.count()},
      {"run_timeout", o.run_timeout.count()},
      {"no_timing", o.no_timing},
      {"warmup", o.warmup},
      {"iterations", o.iterations},
      {"min_samples", o.min_samples},
      {"timing_precision", o.timing_precision},
      {"min_time", o.min_time},
      {"timing_timeout", o.timing_timeout},
      {"throttle_recovery", o.throttle_recovery},
      {"warm", o.warm},
      {"no_compile_baseline", o.no_compile_baseline},
      {"no_reference_cache", o.no_reference_cache},
      {"profile", o.profile},
      {"roofline", path_json(o.roofline)},
      {"backend", o.backend},
      {"rules", path_json(o.rules)},
      {"python", path_json(o.python)},
      {"cache_dir", path_json(o.cache_dir)},
      {"keep_scratch", o.keep_scratch},
  };
}

Decoded<EvalOptions> options_from_json(const nlohmann::json& document, const std::string& path) {
  try {
    return {read_options(JsonObjectReader(document, path)), ""};
  } catch (const JsonFieldError& error) {
    return {std::nullopt, error.what()};
  }
}

nlohmann::json identity_json(const EvalOptions& options) {
  nlohmann::json out = to_json(options);
  for (const char* key : {"problem", "candidate", "gpu", "python", "cache_dir", "keep_scratch",
                          "roofline", "no_reference_cache"}) {
    out.erase(key);
  }
  return out;
}

bool names_bundled_rule_set(const std::filesystem::path& rules) {
  const std::string text = rules.string();
  return !text.empty() && text.find('/') == std::string::npos && rules.extension() != ".json";
}

const std::vector<std::string>& known_variants() {
  static const std::vector<std::string> variants = {"standard", "popcorn", "popcorn2"};
  return variants;
}

const std::vector<std::string>& known_precisions() {
  static const std::vector<std::string> precisions = {"fp32", "fp16", "bf16"};
  return precisions;
}

std::vector<OptionProblem> find_option_problems(const EvalOptions& o) {
  std::vector<OptionProblem> problems;
  // A rule over several fields names those that broke it.
  auto failing = [](std::initializer_list<std::pair<const char*, bool>> checks) {
    std::vector<std::string> fields;
    for (const auto& [field, failed] : checks) {
      if (failed) {
        fields.emplace_back(field);
      }
    }
    return fields;
  };
  if (o.device != "auto" && o.device != "cuda" && o.device != "cpu") {
    problems.push_back({{"device"}, "--device must be cuda, cpu or auto, not '" + o.device + "'"});
  }
  if (o.trials < 1 || o.trials > 1000) {
    problems.push_back({{"trials"}, "--trials must be between 1 and 1000"});
  }
  const auto& variants = known_variants();
  if (std::find(variants.begin(), variants.end(), o.variant) == variants.end()) {
    std::string names;
    for (const auto& v : variants) {
      names += (names.empty() ? "" : ", ") + v;
    }
    problems.push_back(
        {{"variant"}, "--variant must be one of " + names + ", not '" + o.variant + "'"});
  }
  const auto& precisions = known_precisions();
  if (std::find(precisions.begin(), precisions.end(), o.precision) == precisions.end()) {
    problems.push_back(
        {{"precision"}, "--precision must be fp32, fp16 or bf16, not '" + o.precision + "'"});
  }
  if (!o.profile.empty() && o.profile != "sol" && o.profile != "full") {
    problems.push_back({{"profile"}, "--profile must be sol or full, not '" + o.profile + "'"});
  }
  if (!o.roofline.empty() && o.profile.empty()) {
    problems.push_back(
        {{"roofline", "profile"},
         "--roofline needs --profile sol or --profile full (the chart plots counters)"});
  }
  if ((o.atol && *o.atol < 0) || (o.rtol && *o.rtol < 0)) {
    problems.push_back({failing({{"atol", o.atol && *o.atol < 0}, {"rtol", o.rtol && *o.rtol < 0}}),
                        "--atol and --rtol must not be negative"});
  }
  if (o.compile_timeout.count() <= 0 || o.run_timeout.count() <= 0) {
    problems.push_back({failing({{"compile_timeout", o.compile_timeout.count() <= 0},
                                 {"run_timeout", o.run_timeout.count() <= 0}}),
                        "--compile-timeout and --run-timeout must be positive"});
  }
  if (o.iterations < 0 || o.warmup < 0) {
    problems.push_back({failing({{"iterations", o.iterations < 0}, {"warmup", o.warmup < 0}}),
                        "--iterations and --warmup must not be negative"});
  }
  if (o.min_samples < 1 || o.timing_precision <= 0 || o.min_time < 0 || o.timing_timeout <= 0) {
    problems.push_back({failing({{"min_samples", o.min_samples < 1},
                                 {"timing_precision", o.timing_precision <= 0},
                                 {"timing_timeout", o.timing_timeout <= 0},
                                 {"min_time", o.min_time < 0}}),
                        "--min-samples must be at least 1, --timing-precision and --timing-timeout "
                        "positive and --min-time not negative"});
  }
  if (o.gpu < 0) {
    problems.push_back({{"gpu"}, "--gpu must not be negative"});
  }
  if (o.world_size < 0 || o.world_size > 64) {
    problems.push_back(
        {{"world_size"},
         "--world-size must be between 1 and 64 (0: the problem's KBENCH_WORLD_SIZE)"});
  }
  return problems;
}

std::vector<std::string> validate(const EvalOptions& options) {
  std::vector<std::string> messages;
  for (const auto& problem : find_option_problems(options)) {
    messages.push_back(problem.message);
  }
  return messages;
}

} // namespace kbench
