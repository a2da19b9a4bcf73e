"""Which problems the compatibility report covers, and under which variant each is checked.

KernelBench levels 1-4 run under `standard` (their shapes are fixed); PopcornBench's `popcorn`
and `popcorn2` folders under the variant of the same name, which is how PopcornBench draws their
per-trial shapes.
"""

from dataclasses import dataclass
from pathlib import Path

LEVELS = (1, 2, 3, 4)
POPCORN_FOLDERS = ("popcorn", "popcorn2")


@dataclass(frozen=True)
class Problem:
    suite: str  # "KernelBench" or "PopcornBench/popcorn" ...
    level: int
    path: Path
    variant: str

    @property
    def key(self) -> str:
        """A file-name-safe id, stable across machines (the suites' roots differ)."""
        return f"{self.suite.replace('/', '-')}-L{self.level}-{self.path.stem}-{self.variant}"

    @property
    def label(self) -> str:
        return f"{self.suite} level{self.level}/{self.path.name}"


def _level_dir(root: Path, level: int) -> Path:
    return root / "KernelBench" / f"level{level}"


def _py_files(folder: Path) -> list[Path]:
    def number(p: Path):
        head = p.stem.split("_", 1)[0]
        return (int(head) if head.isdigit() else 10**9, p.name)

    return sorted((p for p in folder.glob("*.py") if p.is_file()), key=number)


def kernelbench_problems(root: Path) -> list[Problem]:
    root = Path(root)
    found = []
    for level in LEVELS:
        folder = _level_dir(root, level)
        if not folder.is_dir():
            raise SystemExit(f"{folder}: not found; pass the root of a KernelBench checkout")
        found += [Problem("KernelBench", level, p, "standard") for p in _py_files(folder)]
    return found


def popcornbench_problems(root: Path) -> list[Problem]:
    root = Path(root)
    found = []
    for folder_name in POPCORN_FOLDERS:
        for level in LEVELS:
            folder = _level_dir(root, level) / folder_name
            if not folder.is_dir():
                raise SystemExit(f"{folder}: not found; pass the root of a POPCORNBENCH-clean checkout")
            found += [
                Problem(f"PopcornBench/{folder_name}", level, p, folder_name) for p in _py_files(folder)
            ]
    return found
