#pragma once
// Building the pages' HTML on the server. Every text that came from a model, a candidate, a
// problem or a path goes through escape() (or attr() inside an attribute): reasoning, sources,
// tool output and file names are shown as text, never run. The pages carry no script at all
// (the Content-Security-Policy says so: docs/dashboard.md), so they read the same without
// JavaScript.
#include <optional>
#include <string>
#include <string_view>

namespace kbench::web {

std::string escape(std::string_view text); // &, <, >, ", '
std::string attr(std::string_view text);   // the same, for an attribute's value

// The header every page answer carries (kbench serve); every page repeats it, less
// frame-ancestors (a header-only directive), as a meta for the static report.
const char* content_security_policy();

struct PageFrame {
  std::string title;
  std::string root; // the prefix of the site's root: "/" served, "../" or "" in the static report
  bool static_site = false; // links end in .html
  int refresh_s = 0;        // a page of something still running reloads itself
};

// The page around `body`: head, stylesheet, navigation.
std::string page(const PageFrame& frame, const std::string& body);

// Links between the pages, served or static.
struct Links {
  std::string root = "/";
  bool static_site = false;
  std::string to(std::string_view kind, std::string_view id = {}) const; // "runs", "runs/ID"
  std::string raw_evaluation(std::string_view id) const;                 // its JSON document
  std::string raw_run(std::string_view id) const;
};

// A number with its unit, or "—" (with the reason as a title) when it is absent.
std::string figure(std::optional<double> value, std::string_view unit, int digits = 2);
std::string microseconds(std::optional<double> value);
std::string percent(std::optional<double> share); // a fraction shown as a percentage
std::string bytes(std::optional<double> value);

} // namespace kbench::web
