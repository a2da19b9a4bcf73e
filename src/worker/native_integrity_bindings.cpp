// An attribute replaced with setattr (from Python, pybind11 or PyObject_SetAttr) is seen by
// identity in Python. What identity cannot see is C++ writing into the object that stays in
// place: the PyMethodDef behind a method descriptor (libtorch_python keeps those tables in
// writable memory), a getset's getter, a type's slots (tp_richcompare, the number methods), a
// function's code. api_fingerprints() hashes exactly those pointers, so the check compares
// them too.
#include "worker/native_integrity_bindings.hpp"

#include <Python.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <structmember.h> // PyMemberDef
#include <vector>

namespace py = pybind11;

namespace kbench::worker {
namespace {

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  // splitmix64's finaliser over the running hash: cheap, and no two pointers cancel out.
  std::uint64_t z = hash ^ (value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <typename T>
std::uint64_t bits(T value) {
  std::uint64_t out = 0;
  static_assert(sizeof(T) <= sizeof(out));
  std::memcpy(&out, &value, sizeof(T));
  return out;
}

// A table of function pointers (PyNumberMethods and the like) as one hash.
template <typename Table>
std::uint64_t table_hash(std::uint64_t hash, const Table* table) {
  if (table == nullptr) {
    return mix(hash, 0);
  }
  unsigned char raw[sizeof(Table)];
  std::memcpy(raw, table, sizeof(Table));
  for (std::size_t at = 0; at + sizeof(void*) <= sizeof(Table); at += sizeof(void*)) {
    std::uint64_t word = 0;
    std::memcpy(&word, raw + at, sizeof(void*));
    hash = mix(hash, word);
  }
  return hash;
}

std::uint64_t method_def_hash(std::uint64_t hash, const PyMethodDef* def) {
  hash = mix(hash, bits(def));
  if (def != nullptr) {
    hash = mix(hash, bits(def->ml_meth));
    hash = mix(hash, static_cast<std::uint64_t>(def->ml_flags));
  }
  return hash;
}

std::uint64_t type_hash(std::uint64_t hash, PyTypeObject* type) {
  for (const std::uint64_t slot :
       {bits(type->tp_call), bits(type->tp_getattro), bits(type->tp_setattro),
        bits(type->tp_richcompare), bits(type->tp_hash), bits(type->tp_iter),
        bits(type->tp_iternext), bits(type->tp_descr_get), bits(type->tp_descr_set),
        bits(type->tp_new), bits(type->tp_init), bits(type->tp_repr), bits(type->tp_str),
        bits(type->tp_vectorcall), bits(type->tp_base)}) {
    hash = mix(hash, slot);
  }
  hash = table_hash(hash, type->tp_as_number);
  hash = table_hash(hash, type->tp_as_sequence);
  hash = table_hash(hash, type->tp_as_mapping);
  hash = table_hash(hash, type->tp_as_async);
  return table_hash(hash, type->tp_as_buffer);
}

std::uint64_t fingerprint(PyObject* object) {
  PyTypeObject* type = Py_TYPE(object);
  std::uint64_t hash = mix(0, bits(type));
  if (PyCFunction_Check(object)) { // builtins and pybind11 functions
    const auto* function = reinterpret_cast<PyCFunctionObject*>(object);
    hash = method_def_hash(hash, function->m_ml);
    return mix(hash, bits(function->vectorcall));
  }
  if (type == &PyMethodDescr_Type || type == &PyClassMethodDescr_Type) {
    const auto* descr = reinterpret_cast<PyMethodDescrObject*>(object);
    hash = method_def_hash(hash, descr->d_method);
    hash = mix(hash, bits(descr->d_common.d_type));
    return mix(hash, bits(descr->vectorcall));
  }
  if (type == &PyGetSetDescr_Type) {
    const auto* descr = reinterpret_cast<PyGetSetDescrObject*>(object);
    hash = mix(hash, bits(descr->d_getset));
    if (descr->d_getset != nullptr) {
      hash = mix(hash, bits(descr->d_getset->get));
      hash = mix(hash, bits(descr->d_getset->set));
    }
    return mix(hash, bits(descr->d_common.d_type));
  }
  if (type == &PyMemberDescr_Type) {
    const auto* descr = reinterpret_cast<PyMemberDescrObject*>(object);
    hash = mix(hash, bits(descr->d_member));
    if (descr->d_member != nullptr) {
      hash = mix(hash, static_cast<std::uint64_t>(descr->d_member->type));
      hash = mix(hash, static_cast<std::uint64_t>(descr->d_member->offset));
    }
    return hash;
  }
  if (type == &PyWrapperDescr_Type) {
    const auto* descr = reinterpret_cast<PyWrapperDescrObject*>(object);
    hash = mix(hash, bits(descr->d_base));
    if (descr->d_base != nullptr) {
      hash = mix(hash, bits(descr->d_base->wrapper));
      hash = mix(hash, bits(descr->d_base->function));
    }
    return mix(hash, bits(descr->d_wrapped));
  }
  if (PyFunction_Check(object)) { // Python functions: the code and what it closes over
    const auto* function = reinterpret_cast<PyFunctionObject*>(object);
    for (const std::uint64_t field :
         {bits(function->func_code), bits(function->func_globals), bits(function->func_defaults),
          bits(function->func_kwdefaults), bits(function->func_closure),
          bits(function->vectorcall)}) {
      hash = mix(hash, field);
    }
    return hash;
  }
  if (PyType_Check(object)) {
    return type_hash(hash, reinterpret_cast<PyTypeObject*>(object));
  }
  return hash;
}

} // namespace

void bind_integrity_module(py::module_& module) {
  module.def(
      "api_fingerprints",
      [](const py::list& objects) {
        std::vector<std::uint64_t> out;
        out.reserve(objects.size());
        for (const py::handle object : objects) {
          out.push_back(fingerprint(object.ptr()));
        }
        return out;
      },
      py::arg("objects"),
      "One hash per object of the C pointers that decide what calling it does (a builtin's "
      "PyMethodDef and function, a descriptor's getter or wrapper, a Python function's code, "
      "defaults and closure, a type's slots); equal hashes mean nothing was swapped in place");
}

} // namespace kbench::worker
