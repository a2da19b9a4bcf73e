#include "web/html.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kbench::web {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string attr(std::string_view text) {
  return escape(text);
}

namespace {
// What a <meta> may carry (the static report has no headers); frame-ancestors is honoured only
// as a header, and browsers log an error for it in a meta.
constexpr const char* kPagePolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; "
                                    "base-uri 'none'; form-action 'self'";
} // namespace

const char* content_security_policy() {
  static const std::string header = std::string(kPagePolicy) + "; frame-ancestors 'none'";
  return header.c_str();
}

std::string page(const PageFrame& frame, const std::string& body) {
  const Links links{frame.root, frame.static_site};
  std::string head = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">"
      "<link rel=\"icon\" href=\"data:,\">" // no /favicon.ico request, no 404 in the console
      "<title>{} · kbench</title><link rel=\"stylesheet\" href=\"{}static/kbench.css\">",
      attr(kPagePolicy), escape(frame.title), attr(frame.root));
  if (frame.refresh_s > 0) {
    head += fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">", frame.refresh_s);
  }
  return head +
         fmt::format(
             "</head><body><nav><a class=\"brand\" href=\"{}\">kbench</a> <a href=\"{}\">runs</a> "
             "<a href=\"{}\">evaluations</a> <a href=\"{}\">leaderboard</a></nav>"
             "<main>{}</main></body></html>\n",
             attr(links.to("")), attr(links.to("runs")), attr(links.to("evaluations")),
             attr(links.to("leaderboard")), body);
}

std::string Links::to(std::string_view kind, std::string_view id) const {
  if (static_site) {
    if (kind.empty()) {
      return root + "index.html";
    }
    return root + std::string(kind) + (id.empty() ? "" : "/" + std::string(id)) + ".html";
  }
  return root + std::string(kind) + (id.empty() ? "" : "/" + std::string(id));
}

std::string Links::raw_evaluation(std::string_view id) const {
  return root + "raw/evaluations/" + std::string(id) + ".json";
}

std::string Links::raw_run(std::string_view id) const {
  return root + "raw/runs/" + std::string(id) + ".json";
}

std::string figure(std::optional<double> value, std::string_view unit, int digits) {
  if (!value || !std::isfinite(*value)) {
    return "—";
  }
  // A ratio reads "1.80x"; a quantity keeps a space before its unit ("27.78 µs").
  return fmt::format("{:.{}f}{}{}", *value, digits, unit.empty() || unit == "x" ? "" : " ", unit);
}

std::string microseconds(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) {
    return "—";
  }
  const double v = *value;
  return v >= 1000 ? fmt::format("{:.3f} ms", v / 1000) : fmt::format("{:.2f} µs", v);
}

std::string percent(std::optional<double> share) {
  return share ? fmt::format("{:.1f} %", *share * 100) : "—";
}

std::string bytes(std::optional<double> value) {
  if (!value) {
    return "—";
  }
  const double v = *value;
  if (v >= 1e9) {
    return fmt::format("{:.2f} GB", v / 1e9);
  }
  if (v >= 1e6) {
    return fmt::format("{:.2f} MB", v / 1e6);
  }
  if (v >= 1e3) {
    return fmt::format("{:.1f} kB", v / 1e3);
  }
  return fmt::format("{:.0f} B", v);
}

} // namespace kbench::web
