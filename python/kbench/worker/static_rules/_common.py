"""What more than one rule module needs: the modules an import statement names."""

import ast


def imported_modules(node):
    """The modules `import a.b` or `from a import b` names (`a.b`; `a` and `a.b`), else []."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return []
