// The pages' one stylesheet (served at static/kbench.css; the static report writes it beside
// the pages). No script anywhere: collapsible parts are <details>, sorting and filters are links
// and forms, and a running run's page reloads itself with a meta refresh.
#include "web/site.hpp"

namespace kbench::web {

const std::string& stylesheet() {
  static const std::string css = R"css(
:root { --ink: #1d2330; --muted: #667085; --line: #d9dee7; --bg: #f7f8fa; --good: #137a3a;
        --bad: #b42318; --warn: #b54708; --accent: #2a5bd7; --cand: #d9480f; --ref: #1c7ed6; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
nav { background: #101828; padding: 10px 20px; }
nav a { color: #d0d5dd; margin-right: 16px; text-decoration: none; }
nav a.brand { color: #fff; font-weight: 700; }
main { max-width: 1280px; margin: 0 auto; padding: 16px 20px 60px; }
h1 { font-size: 20px; margin: 8px 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
a { color: var(--accent); }
.muted { color: var(--muted); }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 12px 0; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 8px 16px; }
.grid div { border-bottom: 1px solid var(--line); padding: 2px 0; min-width: 0; overflow-wrap: anywhere; }
.grid .k { color: var(--muted); font-size: 12px; display: block; }
.status-ok { color: var(--good); font-weight: 600; }
.status-bad { color: var(--bad); font-weight: 600; }
.flag { display: inline-block; background: #fff4e5; color: var(--warn); border-radius: 4px; padding: 0 6px; margin: 0 4px 2px 0; font-size: 12px; }
.diff { background: #fff8c5; }
.sig { color: var(--bad); font-weight: 700; }
pre { background: #0f172a; color: #e2e8f0; padding: 10px; border-radius: 6px; overflow: auto; max-height: 520px; font-size: 12px; white-space: pre-wrap; word-break: break-word; }
pre.diff-view { background: #fff; color: var(--ink); border: 1px solid var(--line); }
.add { background: #e6ffec; display: block; } .del { background: #ffebe9; display: block; }
details { margin: 6px 0; } summary { cursor: pointer; color: var(--accent); }
.turn { border-left: 3px solid var(--line); padding-left: 12px; margin: 14px 0; }
.call { background: var(--bg); border-radius: 6px; padding: 6px 10px; margin: 6px 0; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin: 8px 0; }
form.filters label { font-size: 12px; color: var(--muted); display: flex; flex-direction: column; }
form.filters input, form.filters select { font: inherit; padding: 3px 6px; }
.pager a, .pager span { margin-right: 10px; }
svg text { font: 11px system-ui, sans-serif; fill: var(--ink); }
svg .axis { stroke: var(--muted); stroke-width: 1; }
svg .cand { fill: var(--cand); stroke: var(--cand); } svg .ref { fill: var(--ref); stroke: var(--ref); }
svg .box-cand { fill: #ffe8d9; stroke: var(--cand); } svg .box-ref { fill: #dbeafe; stroke: var(--ref); }
svg .bar { fill: #98a2b3; } svg .line { fill: none; stroke: var(--cand); stroke-width: 2; }
)css";
  return css;
}

} // namespace kbench::web
