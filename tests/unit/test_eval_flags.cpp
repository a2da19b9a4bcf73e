// Covers src/cli/eval_flags.cpp: every flag that `kbench eval` and `kbench suite` share fills
// the EvalOptions field of the same name (dashes for underscores), and the defaults the help
// prints are those of EvalOptions{}. The command's own outputs (--json, --quiet, --jsonl) are
// not EvalOptions fields and are not added here.
#include "cli/eval_flags.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What the test knows about one flag: the field it fills, the value(s) a realistic command
// line gives it, and checks on that field. The FIELD macro spells the field once, so an entry
// cannot name a field that EvalOptions lacks (it would not compile).
struct Expectation {
  std::string field;
  std::vector<std::string> values; // empty for a flag without a value
  std::function<bool(const EvalOptions&)> holds_given_value;
  std::function<bool(const EvalOptions&, const EvalOptions&)> same_field;
};

// clang-format off
#define FIELD(name, values, expected)                                                          \
  Expectation{#name, values,                                                                   \
              [](const EvalOptions& o) { return o.name == expected; },                         \
              [](const EvalOptions& a, const EvalOptions& b) { return a.name == b.name; }}
// clang-format on

using Values = std::vector<std::string>;

// One entry per flag of add_shared_eval_options; each value differs from EvalOptions{}'s.
const std::vector<Expectation>& expectations() {
  static const std::vector<Expectation> table = {
      FIELD(device, Values{"cpu"}, "cpu"),
      FIELD(backend, Values{"triton"}, "triton"),
      FIELD(rules, Values{"my/rules.json"}, fs::path("my/rules.json")),
      FIELD(world_size, Values{"4"}, 4),
      FIELD(gpu, Values{"2"}, 2),
      FIELD(trials, Values{"7"}, 7),
      FIELD(seed, Values{"1234"}, 1234u),
      FIELD(variant, Values{"popcorn"}, "popcorn"),
      FIELD(precision, Values{"bf16"}, "bf16"),
      FIELD(atol, Values{"0.001"}, 0.001),
      FIELD(rtol, Values{"0.02"}, 0.02),
      FIELD(compile_timeout, Values{"120"}, 120s),
      FIELD(run_timeout, Values{"30"}, 30s),
      FIELD(min_samples, Values{"20"}, 20),
      FIELD(timing_precision, Values{"0.02"}, 0.02),
      FIELD(min_time, Values{"1.5"}, 1.5),
      FIELD(timing_timeout, Values{"60"}, 60.0),
      FIELD(throttle_recovery, Values{"0.2"}, 0.2),
      FIELD(warm, Values{}, true),
      FIELD(no_compile_baseline, Values{}, true),
      FIELD(no_reference_cache, Values{}, true),
      FIELD(iterations, Values{"50"}, 50),
      FIELD(warmup, Values{"1"}, 1),
      FIELD(no_timing, Values{}, true),
      FIELD(profile, Values{"sol"}, "sol"),
      FIELD(roofline, Values{"out/roofline.svg"}, fs::path("out/roofline.svg")),
      FIELD(python, Values{"/opt/env/bin/python"}, fs::path("/opt/env/bin/python")),
      FIELD(cache_dir, Values{"/tmp/kbench-cache"}, fs::path("/tmp/kbench-cache")),
      FIELD(keep_scratch, Values{}, true),
  };
  return table;
}

#undef FIELD

// The flag that fills `field`: iterations -> --iterations, no_timing -> --no-timing.
std::string flag_for(std::string field) {
  std::replace(field.begin(), field.end(), '_', '-');
  return "--" + field;
}

// A `kbench eval` with only the shared flags, as the tests parse it.
struct EvalCommand {
  CLI::App app{"kbench"};
  CLI::App* command = app.add_subcommand("eval");
  EvalOptions options;

  EvalCommand() { add_shared_eval_options(*command, options); }

  void parse(std::vector<std::string> args) {
    args.insert(args.begin(), {"kbench", "eval"});
    std::vector<const char*> argv;
    for (const auto& arg : args) {
      argv.push_back(arg.c_str());
    }
    app.parse(static_cast<int>(argv.size()), argv.data());
  }

  // The long names of every option but --help.
  std::vector<std::string> long_names() const {
    std::vector<std::string> names;
    for (const CLI::Option* option : command->get_options()) {
      if (option == command->get_help_ptr()) {
        continue;
      }
      for (const auto& name : option->get_lnames()) {
        names.push_back("--" + name);
      }
    }
    return names;
  }
};

TEST(EvalFlags, EveryFlagHasAnExpectationNamingItsField) {
  // A flag added without an entry above fails here, and so does a flag whose name is not its
  // field's with dashes for underscores.
  std::map<std::string, std::string> field_by_flag;
  for (const auto& e : expectations()) {
    field_by_flag[flag_for(e.field)] = e.field;
  }
  const EvalCommand eval;
  for (const auto& flag : eval.long_names()) {
    EXPECT_TRUE(field_by_flag.count(flag))
        << flag << " fills no EvalOptions field of the same name (or has no entry in this test)";
  }
}

TEST(EvalFlags, EveryExpectationNamesAFlagThatExists) {
  const EvalCommand eval;
  const auto names = eval.long_names();
  for (const auto& e : expectations()) {
    EXPECT_NE(std::find(names.begin(), names.end(), flag_for(e.field)), names.end())
        << "no flag " << flag_for(e.field) << " for the field " << e.field;
  }
}

TEST(EvalFlags, ARealisticCommandLineFillsEveryField) {
  std::vector<std::string> args;
  for (const auto& e : expectations()) {
    args.push_back(flag_for(e.field));
    args.insert(args.end(), e.values.begin(), e.values.end());
  }
  EvalCommand eval;
  ASSERT_NO_THROW(eval.parse(args));
  for (const auto& e : expectations()) {
    EXPECT_FALSE(e.holds_given_value(EvalOptions{}))
        << e.field << ": the test's value is the default, so it proves nothing";
    EXPECT_TRUE(e.holds_given_value(eval.options))
        << flag_for(e.field) << " did not fill " << e.field;
  }
}

TEST(EvalFlags, EachFlagFillsOnlyItsOwnField) {
  for (const auto& given : expectations()) {
    std::vector<std::string> args{flag_for(given.field)};
    args.insert(args.end(), given.values.begin(), given.values.end());
    EvalCommand eval;
    ASSERT_NO_THROW(eval.parse(args)) << args.front();
    for (const auto& other : expectations()) {
      if (other.field != given.field) {
        EXPECT_TRUE(other.same_field(eval.options, EvalOptions{}))
            << flag_for(given.field) << " changed " << other.field;
      }
    }
  }
}

TEST(EvalFlags, NoFlagsLeaveTheDefaultsOfEvalOptions) {
  EvalCommand eval;
  ASSERT_NO_THROW(eval.parse({}));
  for (const auto& e : expectations()) {
    EXPECT_TRUE(e.same_field(eval.options, EvalOptions{})) << e.field;
  }
}

TEST(EvalFlags, TheDefaultsTheHelpShowsAreThoseOfEvalOptions) {
  // Each default printed by --help, given back as the flag's value, is EvalOptions{}'s.
  const EvalCommand described;
  std::size_t checked = 0;
  for (const CLI::Option* option : described.command->get_options()) {
    if (option->get_default_str().empty() || option->get_type_size() == 0) {
      continue;
    }
    const std::string flag = "--" + option->get_lnames().front();
    const auto e = std::find_if(expectations().begin(), expectations().end(),
                                [&](const Expectation& x) { return flag_for(x.field) == flag; });
    ASSERT_NE(e, expectations().end()) << flag;
    EvalCommand eval;
    ASSERT_NO_THROW(eval.parse({flag, option->get_default_str()})) << flag;
    EXPECT_TRUE(e->same_field(eval.options, EvalOptions{}))
        << flag << " shows the default " << option->get_default_str();
    ++checked;
  }
  EXPECT_GE(checked, 10u); // --device, --trials, --iterations, --min-time...
}

} // namespace
} // namespace kbench::cli
