"""Static rules over a candidate's source (docs/architecture.md, "The pipeline of one
evaluation", step 1; docs/static-checks.md).

Each verdict has a rule id, a severity (`reject` or `warn`), a message and the line it points
at. The rules are code (the static_rules package); which of them run and how severe they are
is data: a rule set, python/kbench/rules/<name>.json, `default` unless the request names another.

A rule set also holds dynamic rules (DYNAMIC_RULES), which judge what the timing measured: this
module validates them and hands them on with the answer (`dynamic_rules`), and the orchestrator
applies them after timing (src/pipeline/dynamic_rules.cpp).
"""

import ast
import json
import re
from pathlib import Path

from . import static_rules as rules
from .own_kernels import own_kernel_names_in
from .static_analysis import Candidate, problem_constants

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
SEVERITIES = ("reject", "warn", "off")
BACKENDS = ("cuda", "triton", "cute", "tilelang", "cpu")


class RuleSetError(ValueError):
    """A rule set that cannot be used: the message names the file and what is wrong."""


def _verdict(rule, severity, message, line=None):
    return {"rule": rule, "severity": severity, "message": message, "line": line}


def _module_bindings(tree):
    """Names bound at module level, with the line that binds them."""
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.setdefault(node.name, node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names.setdefault(sub.id, node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.setdefault((alias.asname or alias.name).split(".")[0], node.lineno)
    return names


def _rule_modelnew_defined(candidate, options):
    if "ModelNew" in _module_bindings(candidate.tree):
        return []
    classes = [node.name for node in candidate.tree.body if isinstance(node, ast.ClassDef)]
    hint = f" (it defines: {', '.join(classes)})" if classes else ""
    return [(None, f"{candidate.path} defines no ModelNew at module level{hint}; a candidate must "
             "define class ModelNew(nn.Module)")]


# Rule id -> (function, the options it accepts besides "severity").
RULES = {
    "modelnew-defined": (_rule_modelnew_defined, ()),
    "reference-reuse": (rules.rule_reference_reuse, ()),
    "torch-compute-in-forward": (rules.rule_torch_compute, ()),
    "fallback": (rules.rule_fallback, ()),
    "patching": (rules.rule_patching, ()),
    "concurrency-and-io": (rules.rule_concurrency_and_io, ()),
    "introspection": (rules.rule_introspection, ()),
    "harness-import": (rules.rule_harness_import, ()),
    "stream-without-join": (rules.rule_stream_without_join, ("joined_severity",)),
    "lazy-output": (rules.rule_lazy_output, ()),
    "kernel-required": (rules.rule_kernel_required, ("backends",)),
    "library-compute": (rules.rule_library_compute, ()),
    "precision-downgrade": (rules.rule_precision_downgrade, ()),
    "shape-specialised": (rules.rule_shape_specialised, ()),
}

# Rule id -> the options it accepts besides "severity". Judged after timing, by the orchestrator.
# own-kernel-share: the candidate's own kernels' share of its GPU kernel time must be at least
# `min_share` (docs/static-checks.md, "Dynamic rules", says why 1 %).
DYNAMIC_RULES = {
    "own-kernel-share": ("min_share",),
}


# ---------------------------------------------------------------- rule sets


def rule_set_path(spec):
    """A rule set named by path, or by the name of a bundled one (`default`, `partial-torch`)."""
    if not spec:
        spec = "default"
    bundled = RULES_DIR / f"{spec}.json"
    if "/" not in spec and not spec.endswith(".json") and bundled.is_file():
        return bundled
    return Path(spec)


def load_rule_set(spec=None, _seen=()):
    """{"name", "description", "rules": {id: {"severity", ...}}}, validated; `extends` names a
    rule set whose rules this one starts from. Rules not listed (nor inherited) are off."""
    path = rule_set_path(spec)
    if str(path) in _seen:
        raise RuleSetError(f"rule set {path}: `extends` loops back to itself")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RuleSetError(f"rule set {path}: cannot read it ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise RuleSetError(f"rule set {path}: not valid JSON ({exc})") from exc
    if not isinstance(document, dict) or not isinstance(document.get("rules"), dict):
        raise RuleSetError(f"rule set {path}: expected an object with a \"rules\" object")
    merged = {}
    if document.get("extends"):
        merged = dict(load_rule_set(document["extends"], _seen + (str(path),))["rules"])
    for rule_id, options in document["rules"].items():
        merged[rule_id] = _validated_rule(path, rule_id, options)
    return {"name": document.get("name", path.stem), "description": document.get("description", ""),
            "path": str(path), "rules": merged}


def _validated_rule(path, rule_id, options):
    if rule_id not in RULES and rule_id not in DYNAMIC_RULES:
        raise RuleSetError(f"rule set {path}: unknown rule id '{rule_id}' (known: "
                           f"{', '.join(sorted(set(RULES) | set(DYNAMIC_RULES)))})")
    if not isinstance(options, dict) or options.get("severity") not in SEVERITIES:
        raise RuleSetError(f"rule set {path}: rule '{rule_id}' needs \"severity\": one of "
                           f"{', '.join(SEVERITIES)}")
    allowed = ("severity",) + (RULES[rule_id][1] if rule_id in RULES else DYNAMIC_RULES[rule_id])
    for key in options:
        if key not in allowed:
            raise RuleSetError(f"rule set {path}: rule '{rule_id}' has unknown option '{key}' "
                               f"(it takes: {', '.join(allowed)})")
    share = options.get("min_share", 0.0)
    if rule_id in DYNAMIC_RULES and (isinstance(share, bool) or not isinstance(share, (int, float))
                                     or not 0 <= share <= 1):
        raise RuleSetError(f"rule set {path}: rule '{rule_id}': min_share must be a number from 0 "
                           f"to 1 (a share of GPU kernel time; 0.01 is 1 %), not {share!r}")
    if options.get("joined_severity", "warn") not in SEVERITIES:
        raise RuleSetError(f"rule set {path}: rule '{rule_id}': joined_severity must be one of "
                           f"{', '.join(SEVERITIES)}")
    for backend, requirement in options.get("backends", {}).items():
        if backend not in BACKENDS or requirement not in rules._REQUIREMENTS:
            raise RuleSetError(f"rule set {path}: rule '{rule_id}': backend '{backend}' -> "
                               f"'{requirement}' (backends: {', '.join(BACKENDS)}; requirements: "
                               f"{', '.join(rules._REQUIREMENTS)})")
    return options


# ---------------------------------------------------------------- checking


def analyse(source, path, backend="auto", rule_set=None, problem=None):
    """{"backend": resolved backend, "rule_set": name, "verdicts": [...], "dynamic_rules": [...]}
    for one candidate. A syntax error is reported by the compile stage, not here."""
    rule_set = rule_set if isinstance(rule_set, dict) else load_rule_set(rule_set)
    if Path(path).suffix in NATIVE_SUFFIXES:
        return _analyse_native(source, path, rule_set)
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return {"backend": backend, "rule_set": rule_set["name"], "verdicts": [],
                "dynamic_rules": _dynamic_rules(rule_set, [])}
    constants = {}
    if problem:
        constants = problem_constants(Path(problem).read_text(encoding="utf-8", errors="replace"))
    candidate = Candidate(tree, source, path, constants)
    if backend in (None, "", "auto"):
        backend = rules.infer_backend(candidate)
    if backend not in BACKENDS:
        raise RuleSetError(f"unknown backend '{backend}' (one of auto, {', '.join(BACKENDS)})")
    verdicts = []
    for rule_id, options in rule_set["rules"].items():
        if options["severity"] != "off" and rule_id in RULES:
            verdicts.extend(_run_rule(rule_id, options, candidate, backend))
    verdicts.sort(key=lambda v: (v["line"] or 0, v["rule"]))
    own = sorted({n for t in [source] + candidate.cpp_sources for n in own_kernel_names_in(t)})
    return {"backend": backend, "rule_set": rule_set["name"], "verdicts": verdicts,
            "dynamic_rules": _dynamic_rules(rule_set, own)}


NATIVE_SUFFIXES = {".cu": "cuda", ".cpp": "cpu"}
_VENDOR_LIBRARY = re.compile(r"^\s*#\s*include\s*[<\"](cublas\w*|cudnn\w*|cublasLt|cusparse\w*)(?:\.h)?[>\"]",
                             re.MULTILINE)


def _analyse_native(source, path, rule_set):
    """The torch-free kernel format (native_candidate.py): no Python to read, so the rules are the
    format's own. The entry point must be there; a .cu file must hold a kernel of its own and
    include no vendor library that would do the work (the own-kernel share judges the rest on the
    GPU, as for any candidate)."""
    backend = NATIVE_SUFFIXES[Path(path).suffix]
    verdicts = []

    def line_of(position):
        return source.count("\n", 0, position) + 1

    if not re.search(r"\bkbench_forward\s*\(", source):
        verdicts.append(_verdict("native-entry", "reject", f"{path} defines no kbench_forward; a .cu or .cpp "
                                 "candidate defines extern \"C\" int kbench_forward(...) (kbench_kernel.h)"))
    severity = lambda rule: rule_set["rules"].get(rule, {}).get("severity", "off")  # noqa: E731
    own = own_kernel_names_in(source)
    if backend == "cuda" and not own and severity("kernel-required") != "off":
        verdicts.append(_verdict("kernel-required", severity("kernel-required"),
                                 f"{path} defines no __global__ kernel: the work must be a kernel of its own"))
    for match in _VENDOR_LIBRARY.finditer(source):
        if severity("library-compute") != "off":
            verdicts.append(_verdict("library-compute", severity("library-compute"),
                                     f"{path} includes {match.group(1)}: a vendor library would do the work, "
                                     "where the task is a kernel of your own", line_of(match.start())))
    return {"backend": backend, "rule_set": rule_set["name"], "verdicts": verdicts,
            "dynamic_rules": _dynamic_rules(rule_set, own)}


def _dynamic_rules(rule_set, own_kernels):
    """The rule set's dynamic rules that are on, for the orchestrator, each with the kernel names
    the candidate's source declares (what the own-kernel share counts as its own)."""
    return [dict(options, rule=rule_id, rule_set=rule_set["name"], own_kernels=own_kernels)
            for rule_id, options in rule_set["rules"].items()
            if rule_id in DYNAMIC_RULES and options["severity"] != "off"]


def _run_rule(rule_id, options, candidate, backend):
    function = RULES[rule_id][0]
    seen = set()
    verdicts = []
    for finding in function(candidate, dict(options, backend=backend)):
        line, message = finding[0], finding[1]
        severity = (finding[2] if len(finding) > 2 and finding[2] else None) or options["severity"]
        if severity == "off" or (line, message) in seen:
            continue
        seen.add((line, message))
        verdicts.append(_verdict(rule_id, severity, message, line))
    return verdicts


def check_source(source: str, path: str, backend="auto", rules=None, problem=None):
    """The verdicts for one candidate under a rule set (`default` when None)."""
    return analyse(source, path, backend, rules, problem)["verdicts"]
