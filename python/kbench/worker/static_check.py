"""Static rules over a candidate's Python source (DESIGN section 2, stage 1).

Each rule has an id, a severity (`reject` or `warn`), a message and the line it points at.
This is the first rule set: the structural rules every candidate must pass. The integrity
rules (torch fallbacks, timer patching, threads, ...) build on the same Verdict shape.
"""

import ast


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


def _rule_modelnew_defined(tree, path):
    if "ModelNew" in _module_bindings(tree):
        return []
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    hint = f" (it defines: {', '.join(classes)})" if classes else ""
    return [
        _verdict(
            "modelnew-defined",
            "reject",
            f"{path} defines no ModelNew at module level{hint}; a candidate must define "
            "class ModelNew(nn.Module)",
        )
    ]


def _rule_reference_reuse(tree, path):
    verdicts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            for base in node.bases:
                if isinstance(base, ast.Name) and base.id == "Model":
                    verdicts.append(
                        _verdict(
                            "reference-reuse",
                            "reject",
                            "ModelNew subclasses the reference Model: the reference's forward "
                            "would run instead of a kernel",
                            node.lineno,
                        )
                    )
    return verdicts


RULES = (_rule_modelnew_defined, _rule_reference_reuse)


def check_source(source: str, path: str):
    """Verdicts for one candidate. A syntax error is reported by the compile stage, not here."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return []
    verdicts = []
    for rule in RULES:
        verdicts.extend(rule(tree, path))
    return verdicts
