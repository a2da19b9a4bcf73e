"""tests/architecture/check_layers.py: the folder layering check fails on what it names."""

import importlib.util
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[1] / "architecture" / "check_layers.py"
_spec = importlib.util.spec_from_file_location("check_layers", _SCRIPT)
check_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layers)


def make_tree(tmp_path, includes):
    """includes: {"folder/file.cpp": ["other/x.hpp", ...]}"""
    src = tmp_path / "src"
    for name, targets in includes.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f'#include "{t}"\n' for t in targets) + "#include <vector>\n")
    for name in includes:
        for target in includes[name]:
            (src / target).parent.mkdir(parents=True, exist_ok=True)
    return src


def problems(src):
    return check_layers.problems_of(*check_layers.folder_graph(src))


def test_the_repository_holds_its_layering():
    src = Path(__file__).resolve().parents[2] / "src"
    assert problems(src) == []


def test_a_downward_tree_passes(tmp_path):
    src = make_tree(tmp_path, {"pipeline/a.cpp": ["measure/m.hpp", "core/c.hpp"],
                               "measure/m.cpp": ["sched/s.hpp", "core/c.hpp"],
                               "sched/s.cpp": ["core/c.hpp"], "core/c.cpp": []})
    assert problems(src) == []


def test_an_upward_include_is_named_with_its_file(tmp_path):
    src = make_tree(tmp_path, {"core/result.cpp": ["measure/stats.hpp"], "measure/stats.cpp": []})
    found = problems(src)
    assert any("core (layer 0) includes measure (layer 1): src/core/result.cpp" in p for p in found)


def test_a_cycle_between_siblings_is_found(tmp_path):
    src = make_tree(tmp_path, {"measure/a.cpp": ["sched/b.hpp"], "sched/b.cpp": ["measure/a.hpp"]})
    found = problems(src)
    assert any(p.startswith("cycle: ") and "measure" in p and "sched" in p for p in found)


def test_the_worker_may_not_include_the_pipeline(tmp_path):
    src = make_tree(tmp_path, {"worker/main.cpp": ["pipeline/evaluation.hpp"],
                               "pipeline/evaluation.cpp": []})
    assert any("worker (layer 2) includes pipeline (layer 2)" in p for p in problems(src))


def test_a_folder_without_a_layer_is_reported(tmp_path):
    src = make_tree(tmp_path, {"gadgets/g.cpp": ["core/c.hpp"], "core/c.cpp": []})
    assert any("src/gadgets/ has no layer" in p for p in problems(src))


def test_the_page_must_show_the_current_graph(tmp_path):
    src = make_tree(tmp_path, {"sched/s.cpp": ["core/c.hpp"], "core/c.cpp": []})
    block = check_layers.graph_block(*check_layers.folder_graph(src))
    assert "  sched --> core" in block
    page = Path("architecture.md")
    assert check_layers.doc_problem(page, f"# Title\n\n{block}\n\nmore\n", block) is None
    stale = block.replace("  sched --> core\n", "")
    assert "out of date" in check_layers.doc_problem(page, f"# Title\n{stale}\n", block)
    assert "no graph" in check_layers.doc_problem(page, "# Title\n", block)
