"""The harness's private reference to kbench_native, and the seal that keeps candidates from it.

kbench_native can stop CUPTI tracing and reads the timing machinery, so a candidate must not
reach it (docs/integrity.md, exploit class 9). Importing this module takes the one reference
the harness uses (`kn`) and then makes the name unimportable: the module leaves sys.modules, a
finder at the front of sys.meta_path refuses the name, and the two creators that would build it
again from the interpreter's cache (`_imp.create_builtin` for the worker's embedded module,
`_imp.create_dynamic` for the extension the Python tests load) refuse it too. Every refused
attempt is recorded; the integrity checks report any as `incorrect`, even when the candidate
caught the ImportError.

Harness modules use `from .native import kn`; nothing imports kbench_native by name after this.
"""

import sys

import _imp

import kbench_native as kn  # the one by-name import: before any problem or candidate code

NAME = "kbench_native"

# How each refused attempt was made, oldest first; integrity.py reports any.
attempts = []


class RefusedImport(ImportError):
    """An import of kbench's own native module by code that is not the harness."""


def _refuse(how):
    attempts.append(how)
    return RefusedImport(
        f"{NAME} is kbench's own module (it controls the timing's tracing); a candidate cannot "
        f"import it ({how})",
        name=NAME,
    )


def _is_ours(name):
    return name == NAME or name.startswith(NAME + ".")


class _RefuseFinder:
    """First on sys.meta_path: `import kbench_native`, importlib.import_module and __import__."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if _is_ours(name):
            raise _refuse("import")
        return None

    @staticmethod
    def invalidate_caches():
        return None


def _guarded(create, how):
    def guarded(spec, *args):
        if _is_ours(getattr(spec, "name", "") or ""):
            raise _refuse(how)
        return create(spec, *args)

    guarded.__name__ = getattr(create, "__name__", how)
    guarded.__qualname__ = guarded.__name__
    guarded.__wrapped_builtin__ = create
    return guarded


FINDER = _RefuseFinder
CREATE_BUILTIN = _guarded(_imp.create_builtin, "_imp.create_builtin")
CREATE_DYNAMIC = _guarded(_imp.create_dynamic, "_imp.create_dynamic")


def _seal():
    sys.modules.pop(NAME, None)
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)
    _imp.create_builtin = CREATE_BUILTIN
    _imp.create_dynamic = CREATE_DYNAMIC


def unsealed():
    """What a candidate did to reopen the name: [] while the seal holds."""
    problems = []
    if FINDER not in sys.meta_path:
        problems.append("removed kbench's import guard from sys.meta_path")
    if _imp.create_builtin is not CREATE_BUILTIN or _imp.create_dynamic is not CREATE_DYNAMIC:
        problems.append("replaced _imp.create_builtin or _imp.create_dynamic")
    for name, module in list(sys.modules.items()):
        if module is kn:
            problems.append(f"put kbench_native back into sys.modules (as {name!r})")
            break
    return problems


_seal()
