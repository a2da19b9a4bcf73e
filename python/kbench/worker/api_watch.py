"""What the integrity check compares: the parts of torch's Python API that the harness touches,
and the harness's own modules, as they were before any candidate code ran (docs/integrity.md,
layer 3 and exploit class 9).

Four kinds of replacement are seen, whatever did the replacing (Python, pybind11, the C API):
- an attribute that now names another object (identity, through the owner's own dictionary,
  so a shadowing entry added to a subclass counts too);
- an object kept in place whose implementation was swapped from C++: a builtin's PyMethodDef,
  a descriptor's getter, a type's slots, a Python function's code (kbench_native's
  api_fingerprints hashes those pointers);
- a kernel registered over one of the ATen operators the harness reads outputs with
  (torch.library or TORCH_LIBRARY_IMPL: the dispatcher's table for the operator changes);
- a torch function or dispatch mode, or a trace or profile hook, left installed: each runs code
  inside the harness's own calls.

A check costs about a millisecond (tests/python/test_integrity.py measures it).
"""

import operator
import sys
import types

import torch

from .native import kn

# Modules whose callables the harness (or torch under it) looks up at call time.
_MODULES = (
    "torch", "torch._C", "torch.cuda", "torch.cuda.streams", "torch.overrides", "time", "builtins",
    "threading", "os", "json", "safetensors", "safetensors.torch", "_imp",
)

# Classes whose methods read or move tensors, time or synchronise; their whole MRO is watched.
_CLASSES = (
    torch.Tensor, torch.UntypedStorage, torch.Size, torch.dtype, torch.device, torch.Generator,
    torch.cuda.Event, torch.cuda.Stream, torch.no_grad, torch.nn.Parameter,
)

# The ATen operators behind the harness's reads (captured.py) and comparisons.
_OPERATORS = (
    "aten::clone", "aten::detach", "aten::_to_copy", "aten::copy_", "aten::view", "aten::view.dtype",
    "aten::reshape", "aten::_reshape_alias", "aten::_unsafe_view", "aten::take", "aten::eq.Tensor",
    "aten::equal", "aten::all", "aten::empty_like", "aten::empty.memory_format",
    "aten::contiguous", "aten::flatten.using_ints", "aten::_local_scalar_dense",
    "aten::index_select", "aten::alias", "aten::lift_fresh",
)

# Replacements torch makes itself: importing torch._dynamo wraps torch.manual_seed in a
# dynamo-disable wrapper. Accepted only as a wrapper around the very original.
_TORCH_WRAPS = {("torch", "manual_seed")}

_HARNESS_PACKAGES = ("kbench.", "kernelbench.")


def _watched(value):
    return callable(value) or isinstance(value, (types.ModuleType, property, staticmethod, classmethod))


class _Owner:
    """One dictionary (a module's or a class's) and the entries of it that are watched."""

    def __init__(self, owner, label):
        self.owner = owner
        self.label = label
        items = [(k, v) for k, v in list(vars(owner).items()) if _watched(v)]
        self.keys = tuple(k for k, _ in items)
        self.values = tuple(v for _, v in items)
        self.all_keys = frozenset(vars(owner))

    def changed(self):
        now = vars(self.owner)
        current = tuple(map(now.get, self.keys))
        if all(map(operator.is_, current, self.values)):
            return []
        return [
            f"{self.label}.{key}"
            for key, was, is_ in zip(self.keys, self.values, current)
            if is_ is not was and not _torch_wrap(self.label, key, was, is_)
        ]


def _torch_wrap(label, key, original, now):
    return (label, key) in _TORCH_WRAPS and getattr(now, "__wrapped__", None) is original


class _Class:
    """A watched class: each dictionary of its MRO, the MRO itself, and no new entry shadowing
    an inherited one."""

    def __init__(self, cls):
        self.cls = cls
        self.mro = cls.__mro__
        self.owners = [_Owner(klass, _class_label(klass)) for klass in self.mro]
        self.inherited = [frozenset().union(*(o.all_keys for o in self.owners[i + 1:]))
                          for i in range(len(self.owners))]

    def changed(self):
        if self.cls.__mro__ is not self.mro:
            return [f"{_class_label(self.cls)}.__bases__"]
        found = []
        for owner, inherited in zip(self.owners, self.inherited):
            found += owner.changed()
            added = vars(owner.owner).keys() - owner.all_keys
            found += [f"{owner.label}.{key}" for key in sorted(added & inherited)]
        return found


def _class_label(cls):
    module = cls.__module__ or ""
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _dispatch_table(op):
    return torch._C._dispatch_dump_table(op)


class Snapshot:
    """Taken once, when integrity.py is imported; `add_harness_modules()` adds the harness's
    own modules (again later, for those imported after the candidate loaded)."""

    def __init__(self):
        self.owners = [_Owner(sys.modules[name], name) for name in _MODULES if name in sys.modules]
        self.classes = [_Class(cls) for cls in _CLASSES]
        self.harness = {}  # module name -> its _Owner and those of the classes it defines
        self.operators = {op: _dispatch_table(op) for op in _OPERATORS}
        self.objects, self.fingerprints = [], []
        self._fingerprint(self.owners + [o for c in self.classes for o in c.owners])
        self.objects += [c.cls for c in self.classes]
        self.fingerprints += kn.api_fingerprints([c.cls for c in self.classes])

    def _fingerprint(self, owners):
        """Adds the objects of `owners` to the fingerprinted ones, hashed now."""
        objects = []
        for owner in owners:
            objects += owner.values
        # A property's or a static/class method's function is where its code lives.
        extra = []
        for value in objects:
            if isinstance(value, property):
                extra += [f for f in (value.fget, value.fset, value.fdel) if f is not None]
            elif isinstance(value, (staticmethod, classmethod)):
                extra.append(value.__func__)
        objects += extra
        self.objects += objects
        self.fingerprints += kn.api_fingerprints(objects)

    def add_harness_modules(self):
        """The kbench and kernelbench modules loaded now and not yet watched, with the classes
        they define. Earlier entries keep their first snapshot."""
        added = []
        for name, module in list(sys.modules.items()):
            if module is None or name in self.harness or not (name + ".").startswith(_HARNESS_PACKAGES):
                continue
            owners = [_Owner(module, name)]
            owners += [_Owner(value, f"{name}.{value.__qualname__}") for value in vars(module).values()
                       if isinstance(value, type) and value.__module__ == name]
            self.harness[name] = owners
            added += owners
        if added:
            self._fingerprint(added)

    def changes(self):
        """What changed since the snapshot: the dotted names of replaced attributes, then
        clauses for the rest ("registered a kernel over aten::clone, ..."); [] when nothing."""
        found = []
        for owner in self.owners:
            found += owner.changed()
        for cls in self.classes:
            found += cls.changed()
        for owners in list(self.harness.values()):
            for owner in owners:
                found += owner.changed()
        now = kn.api_fingerprints(self.objects)
        if not found and now != self.fingerprints:
            found += [f"swapped the implementation of {_describe(obj)} in place"
                      for obj, a, b in zip(self.objects, self.fingerprints, now) if a != b]
        for op, table in self.operators.items():
            if _dispatch_table(op) != table:
                found.append(f"registered a kernel over {op}, one of torch's own operators")
        found += installed_hooks()
        return list(dict.fromkeys(found))  # a class shared by two MROs is named once


def installed_hooks():
    """Hooks that run code inside every torch call or every Python call the harness makes."""
    found = []
    if torch._C._len_torch_function_stack():
        found.append("left a torch function mode active (torch.overrides.TorchFunctionMode)")
    if torch._C._len_torch_dispatch_stack():
        found.append("left a torch dispatch mode active (TorchDispatchMode)")
    if sys.gettrace() is not None:
        found.append("installed a trace function (sys.settrace)")
    if sys.getprofile() is not None:
        found.append("installed a profile function (sys.setprofile)")
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        tools = [t for t in range(6) if monitoring.get_tool(t) is not None]
        if tools:
            found.append(f"registered sys.monitoring tool(s) {tools}")
    return found


def _describe(obj):
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    module = getattr(obj, "__module__", None) or getattr(getattr(obj, "__objclass__", None), "__module__", "")
    return f"{module}.{name}" if module else str(name)
