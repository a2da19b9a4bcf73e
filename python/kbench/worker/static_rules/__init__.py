"""The static rules (docs/static-checks.md has the table, and the exploit each one stops).

Each rule is `rule(candidate, options) -> [(line, message, severity_override_or_None)]`; the rule
set (python/kbench/rules/*.json) gives its severity. Rules look at qualified names
(static_analysis.Candidate.qualname), so aliases do not hide a call.

One module per kind of exploit, each with its own name tables: torch_compute (PyTorch doing the
work), tampering (patching, introspection), concurrency_io, streams (side streams, lazy outputs),
kernels (the kernel required, the backend, precision), library_compute (ATen and
vendor libraries called from the extension's C++), shapes. This package re-exports what
static_check.py uses, so its RULES table names `rules.rule_*` whatever module a rule lives in.
"""

from .concurrency_io import rule_concurrency_and_io
from .kernels import _REQUIREMENTS, infer_backend, rule_kernel_required, rule_precision_downgrade
from .library_compute import rule_library_compute
from .shapes import rule_shape_specialised
from .streams import rule_lazy_output, rule_stream_without_join
from .tampering import rule_harness_import, rule_introspection, rule_patching
from .torch_compute import rule_fallback, rule_reference_reuse, rule_torch_compute

__all__ = [
    "_REQUIREMENTS",
    "infer_backend",
    "rule_concurrency_and_io",
    "rule_fallback",
    "rule_harness_import",
    "rule_introspection",
    "rule_kernel_required",
    "rule_lazy_output",
    "rule_library_compute",
    "rule_patching",
    "rule_precision_downgrade",
    "rule_reference_reuse",
    "rule_shape_specialised",
    "rule_stream_without_join",
    "rule_torch_compute",
]
