"""What a problem's source says it needs, read without running it: third-party modules, Hugging
Face models, `kernelbench.*` names (which kbench's shim must provide), CUDA-only code."""

import ast
import importlib.util
import re
from pathlib import Path

_MODEL_NAME = re.compile(r"""(?:model_name|model_id|repo_id|MODEL_NAME|MODEL_ID)\s*=\s*["']([^"']+)["']""")
_PRETRAINED = re.compile(r"""from_pretrained\(\s*["']([^"']+)["']""")
_HUB_MODULES = {"transformers", "diffusers", "huggingface_hub", "timm", "gpn"}


def _imports(tree):
    """(top-level module, [names]) for each import statement."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, [a.name for a in node.names]


def _shim_missing(module: str, names: list[str]) -> list[str]:
    """The names of `module` (a kernelbench.* module) that kbench's shim does not provide."""
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return [module]
    return [f"{module}.{n}" for n in names if n != "*" and not hasattr(mod, n)]


def scan(path: Path) -> dict:
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    out = {"third_party": [], "missing_modules": [], "hf_models": [], "shim_missing": [],
           "kernelbench_imports": [], "cuda_only": False, "syntax_error": None}
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        out["syntax_error"] = f"line {exc.lineno}: {exc.msg}"
        return out
    for module, names in _imports(tree):
        top = module.split(".")[0]
        if top == "kernelbench":
            out["kernelbench_imports"].append(module)
            out["shim_missing"] += _shim_missing(module, names)
        elif top not in ("torch", "math", "os", "sys", "typing", "functools", "itertools",
                         "dataclasses", "collections", "numpy", "random", "time", "warnings",
                         "einops", "__future__", "enum", "abc", "copy", "inspect"):
            out["third_party"].append(top)
        if top not in ("kernelbench", "__future__") and importlib.util.find_spec(top) is None:
            out["missing_modules"].append(top)
    for key in ("third_party", "missing_modules", "kernelbench_imports", "shim_missing"):
        out[key] = sorted(set(out[key]))
    models = set(_MODEL_NAME.findall(source)) | set(_PRETRAINED.findall(source))
    if models or _HUB_MODULES & set(out["third_party"]):
        out["hf_models"] = sorted(models)
    out["cuda_only"] = bool(re.search(r"load_inline|\.cuda\(\)|device\s*=\s*['\"]cuda", source))
    return out
