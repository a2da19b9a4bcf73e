"""What the static rules look at: a candidate's AST, resolved names, the code `forward` reaches
and the C++/CUDA strings it compiles (docs/static-checks.md).

Names are resolved through the module's imports and simple aliases, so `import
torch.nn.functional as F`, `from torch import matmul as mm` and `mm = torch.matmul` all lead
to the same qualified name `torch.matmul`: a rule written against qualified names cannot be
dodged by renaming.
"""

import ast
import re
from pathlib import Path

# The calls that compile sources, and the keyword arguments that carry them.
LOADERS = {"torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load"}


class Candidate:
    """A parsed candidate and the facts every rule needs."""

    def __init__(self, tree, source, path, problem_constants=None):
        self.tree = tree
        self.source = source
        self.path = path
        self.problem_constants = problem_constants or {}
        self.aliases = _aliases(tree)
        self.string_constants = _string_constants(tree, self)
        self.modelnew = _class(tree, "ModelNew")
        self.functions = _module_functions(tree)
        self.reachable = _reachable_from_forward(self)
        self.loader_calls = [c for c in self.calls(tree) if self.qualname(c.func) in LOADERS]
        self.extension_names = _extension_names(self)
        self.compiled_sources = _compiled_sources(self)
        self.source_files = _loaded_files(self)
        self.cpp_sources = _cpp_like_strings(self)

    def qualname(self, node):
        """`torch.nn.functional.relu` for `F.relu` (after `import torch.nn.functional as F`)."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    @staticmethod
    def calls(root):
        return [n for n in ast.walk(root) if isinstance(n, ast.Call)]

    def string_value(self, node):
        """The string a constant expression evaluates to: literals, `+` of them, names bound to
        them at module level, and lists/tuples of them (joined by newlines)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            left, right = self.string_value(node.left), self.string_value(node.right)
            if isinstance(node.op, ast.Add) and left is not None and right is not None:
                return left + right
            return left  # "%"-formatting: the template is what matters
        if isinstance(node, ast.Name):
            return self.string_constants.get(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            parts = [self.string_value(e) for e in node.elts]
            return "\n".join(p for p in parts if p is not None)
        if isinstance(node, ast.JoinedStr):
            return "".join(
                v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("join", "format") and node.args:
                inner = [self.string_value(a) for a in node.args]
                base = self.string_value(node.func.value) or ""
                return base + "\n".join(i for i in inner if i is not None)
        return None


def _class(tree, name):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _aliases(tree):
    """Local name -> qualified name, from imports and `name = module.attr` assignments."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    aliases.setdefault(root, root)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    # Two passes let `a = torch; b = a.matmul` resolve.
    for _ in range(2):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
                resolved = _resolve(node.value, aliases)
                if resolved and resolved.split(".")[0] in _TRACKED_ROOTS:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            aliases[target.id] = resolved
    return aliases


# Modules whose aliases matter to a rule; `x = self.weight` is not an alias worth tracking.
_TRACKED_ROOTS = {
    "torch", "triton", "time", "sys", "os", "builtins", "gc", "inspect", "ctypes", "cffi",
    "threading", "multiprocessing", "subprocess", "socket", "kbench", "kernelbench", "importlib",
    "pathlib", "shutil", "numpy", "np", "io", "asyncio", "concurrent", "urllib", "http", "requests",
}


def _resolve(node, aliases):
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def _string_constants(tree, candidate):
    """Module-level names bound to strings (resolved in order, so `B = A + "..."` works)."""
    constants = {}
    candidate.string_constants = constants
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = candidate.string_value(node.value)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    constants[target.id] = value
    return constants


def _module_functions(tree):
    """Module-level functions, and each class's methods as `Class.method`."""
    functions = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions[f"{node.name}.{item.name}"] = item
    return functions


def _reachable_from_forward(candidate):
    """`ModelNew.forward` and what it calls in this module, transitively: module functions
    called by name and ModelNew's methods called through `self`."""
    if candidate.modelnew is None or "ModelNew.forward" not in candidate.functions:
        return []
    seen = ["ModelNew.forward"]
    queue = ["ModelNew.forward"]
    while queue:
        function = candidate.functions[queue.pop()]
        for call in Candidate.calls(function):
            name = _callee_key(call.func)
            if name and name in candidate.functions and name not in seen:
                seen.append(name)
                queue.append(name)
    return [candidate.functions[name] for name in seen]


def _callee_key(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return f"ModelNew.{func.attr}"
    return None


def _extension_names(candidate):
    """Names bound to what load_inline/load return: calls on them are the candidate's kernels."""
    names = set()
    for node in ast.walk(candidate.tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if candidate.qualname(node.value.func) in LOADERS:
                for target in node.targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            names.add(sub.id)
                        elif isinstance(sub, ast.Attribute):
                            names.add(sub.attr)
    return names


def _keyword(call, name, position=None):
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def _compiled_sources(candidate):
    """Per loader call: {"cpp": text, "cuda": text, "files": bool} of what it compiles."""
    compiled = []
    for call in candidate.loader_calls:
        entry = {"call": call, "cpp": "", "cuda": "", "files": False}
        if candidate.qualname(call.func).endswith("load_inline"):
            cpp, cuda = _keyword(call, "cpp_sources", 1), _keyword(call, "cuda_sources", 2)
            entry["cpp"] = (candidate.string_value(cpp) or "") if cpp is not None else ""
            entry["cuda"] = (candidate.string_value(cuda) or "") if cuda is not None else ""
        else:
            entry["files"] = _keyword(call, "sources", 1) is not None
        compiled.append(entry)
    return compiled


def _loaded_files(candidate):
    """The source files `load(sources=[...])` compiles: [{"path", "text", "line"}], `path` None
    where the expression is not one the check can work out, `text` None where the file cannot be
    read. Relative paths are taken from the candidate's directory."""
    files = []
    base = Path(candidate.path).resolve().parent if candidate.path else Path.cwd()
    for call in candidate.loader_calls:
        node = _keyword(call, "sources", 1)
        if node is None or candidate.qualname(call.func).endswith("load_inline"):
            continue
        items = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
        for item in items:
            value = _path_value(candidate, item)
            entry = {"path": None, "text": None, "line": item.lineno}
            if value is not None:
                path = Path(value) if Path(value).is_absolute() else base / value
                entry["path"] = str(path)
                try:
                    entry["text"] = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    pass
            files.append(entry)
    return files


_PATH_CALLS = {"os.path.join", "os.path.dirname", "os.path.abspath", "os.path.realpath",
               "os.fspath", "str", "pathlib.Path", "pathlib.PurePath", "Path"}


def _path_value(candidate, node):
    """The path a `sources` element names: string literals and constants, `__file__`,
    os.path.join/dirname/abspath, Path(...), `.parent`, `/`, `.resolve()`; else None."""
    if isinstance(node, ast.Name) and node.id == "__file__":
        return str(Path(candidate.path).resolve()) if candidate.path else None
    if isinstance(node, (ast.Constant, ast.Name, ast.JoinedStr)) or (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return candidate.string_value(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _path_value(candidate, node.left), _path_value(candidate, node.right)
        return str(Path(left) / right) if left is not None and right is not None else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path_value(candidate, node.value)
        return str(Path(inner).parent) if inner is not None else None
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute"):
        return _path_value(candidate, node.func.value)
    name = candidate.qualname(node.func) or ""
    if name not in _PATH_CALLS and name.split(".")[-1] != "Path":
        return None
    parts = [_path_value(candidate, a) for a in node.args]
    if not parts or any(p is None for p in parts):
        return None
    if name == "os.path.join":
        return str(Path(*parts))
    if name == "os.path.dirname":
        return str(Path(parts[0]).parent)
    return parts[0] if len(parts) == 1 else str(Path(*parts))


_CPP_MARKERS = re.compile(r"__global__|#\s*include|#\s*define|<<<")


def _cpp_like_strings(candidate):
    """Every C++/CUDA text the candidate carries: what loaders compile (strings and the files
    load() names), and module-level strings that look like C++ (they may be compiled by a path
    we do not recognise)."""
    texts = []
    for entry in candidate.compiled_sources:
        texts.extend(t for t in (entry["cpp"], entry["cuda"]) if t)
    texts.extend(f["text"] for f in candidate.source_files if f["text"])
    for node in ast.walk(candidate.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _CPP_MARKERS.search(node.value) and node.value not in texts:
                texts.append(node.value)
    return texts


def string_line(candidate, text, offset):
    """The candidate's line of character `offset` of a C++ string: the string literal's first
    line plus the lines before `offset`, when the literal is found; else None."""
    snippet = text[offset : offset + 40].split("\n")[0]
    for node in ast.walk(candidate.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and snippet in node.value:
            inner = node.value.find(snippet)
            # A triple-quoted literal starting with a newline puts its text on the next line.
            return node.lineno + node.value.count("\n", 0, inner)
    return None


def problem_constants(problem_source):
    """Module-level integer constants of a problem (`N = 4096`), by name."""
    constants = {}
    try:
        tree = ast.parse(problem_source)
    except SyntaxError:
        return constants
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            value = node.value.value
            if isinstance(value, int) and not isinstance(value, bool):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        constants[target.id] = value
    return constants
