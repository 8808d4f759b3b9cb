"""CI's lint step (``.ci/lint.py``): its rules are about the repository, so only its mechanism is
tested here: each rule reports what it should, on a planted case."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _lint() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_lint", ROOT / ".ci" / "lint.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LINT = _lint()


def test_the_run_finder_finds_a_planted_run(tmp_path: Path) -> None:
    body = "x = 1\ny = x + 1\nz = y * 2\n"
    (tmp_path / "a.py").write_text("import os\n" + body + "print(z)\n")
    (tmp_path / "b.py").write_text("w = 0\n# a comment\n" + body)
    assert LINT.repeated_runs(tmp_path / "a.py", tmp_path / "b.py") == [(2, 3, 3)]
    assert LINT.repeated_runs(tmp_path / "a.py", tmp_path / "b.py", least=4) == []


def _tree(tmp_path: Path, readme: bytes) -> Path:
    (tmp_path / "README.md").write_bytes(readme)
    for pair in LINT.NO_SHARED_RUNS:
        for name in pair:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(f"value = {name!r}\n")
    return tmp_path


def test_a_readme_over_the_limit_is_one_line_and_one_at_it_is_none(tmp_path: Path) -> None:
    at = _tree(tmp_path, b"x" * LINT.README_LIMIT)
    assert LINT.problems(at) == []
    (at / "README.md").write_bytes(b"x" * (LINT.README_LIMIT + 1))
    (line,) = LINT.problems(at)
    assert line.startswith("README.md:") and "docs/" in line


def test_a_run_shared_by_two_session_kinds_is_reported_with_both_places(tmp_path: Path) -> None:
    at = _tree(tmp_path, b"short")
    a, b = LINT.NO_SHARED_RUNS[0]
    run = "x = 1\ny = x + 1\nz = y * 2\n"
    (at / a).write_text(run)
    (at / b).write_text("w = 0\n" + run)
    (line,) = LINT.problems(at)
    assert line.startswith(f"{a}:1:") and f"{b}:2" in line
