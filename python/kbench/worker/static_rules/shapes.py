"""The rule against code specialised to the benchmark's shapes (exploit 12): a tensor shape
compared with an integer literal, or, when the problem is given, C++ comparing with one of its
size constants. docs/static-checks.md has the table.
"""

import ast
import re

from ..static_analysis import string_line

# ---------------------------------------------------------------- shape specialised


def rule_shape_specialised(candidate, options):
    constants = {v: k for k, v in candidate.problem_constants.items() if v not in (0, 1)}
    findings = []
    for function in candidate.functions.values():
        shape_names = _shape_names(function)
        for node in ast.walk(function):
            if isinstance(node, ast.Compare):
                literal = _literal_against_shape(node, shape_names)
                if literal is not None:
                    which = f" (the problem's {constants[literal]})" if literal in constants else ""
                    findings.append((node.lineno, f"compares a tensor shape with {literal}{which}: "
                                     "code specialised to the benchmark's shapes; handle any shape"))
    if constants:
        findings.extend(_cpp_shape_literals(candidate, constants))
    return findings


def _is_shape(node, shape_names):
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size":
        return True
    return isinstance(node, ast.Name) and node.id in shape_names


def _shape_names(function):
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _is_shape(node.value, set()):
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _literal_against_shape(compare, shape_names):
    operands = [compare.left] + compare.comparators
    literals = [o.value for o in operands if isinstance(o, ast.Constant) and type(o.value) is int]
    if any(_is_shape(o, shape_names) for o in operands):
        for value in literals:
            if value not in (0, 1):
                return value
    return None


def _cpp_shape_literals(candidate, constants):
    findings = []
    pattern = re.compile(r"(==|!=)\s*(\d+)\b|\b(\d+)\s*(==|!=)")
    for text in candidate.cpp_sources:
        for match in pattern.finditer(text):
            value = int(match.group(2) or match.group(3))
            if value in constants:
                findings.append((string_line(candidate, text, match.start()),
                                 f"C++ compares with {value}, the problem's {constants[value]}: "
                                 "code specialised to the benchmark's shapes"))
    return findings
