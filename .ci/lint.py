"""Style rules that are about the repository, not about behaviour: CI's lint step runs them.

They were tests once, and a test that fails because the README grew by a paragraph says nothing
about whether the harness works. Here they are rules a reviewer would apply, each one line of
output when broken:

- the README is at most 15 KB (details live in docs/);
- the session kinds that were near-copies repeat no run of three code lines (the loop they
  share is ``harness/session/loop.py``; a run found here belongs there).

Run it as ``python .ci/lint.py`` (exit 1 and one line per broken rule, or silence).
``tests/test_lint.py`` shows that the run finder finds a planted run.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

README_LIMIT = 15 * 1024
"""Bytes: the README stays short, so that its two opening commands are what a reader sees."""

NO_SHARED_RUNS: tuple[tuple[str, str], ...] = (
    ("harness/proxy/session.py", "harness/session/simulated.py"),
    ("harness/worlds/session.py", "harness/session/simulated.py"),
    ("harness/worlds/bfcl_session.py", "harness/worlds/session.py"),
)
"""Pairs of session kinds that share the loop and must not share code beside it."""

LEAST_RUN = 3


def code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of code of a module, stripped: no blank line, comment or import statement."""
    text = path.read_text(encoding="utf-8")
    imports: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.strip().startswith("#") and n not in imports
    ]


def repeated_runs(a: Path, b: Path, least: int = LEAST_RUN) -> list[tuple[int, int, int]]:
    """Runs of at least ``least`` consecutive code lines that ``a`` and ``b`` both have:
    (line in a, line in b, length)."""
    left, right = code_lines(a), code_lines(b)
    where: dict[str, list[int]] = {}
    for j, (_, line) in enumerate(right):
        where.setdefault(line, []).append(j)
    found: list[tuple[int, int, int]] = []
    i = 0
    while i < len(left):
        best, at = 0, 0
        for j in where.get(left[i][1], ()):
            n = 0
            while i + n < len(left) and j + n < len(right) and left[i + n][1] == right[j + n][1]:
                n += 1
            if n > best:
                best, at = n, j
        if best >= least:
            found.append((left[i][0], right[at][0], best))
            i += best
        else:
            i += 1
    return found


def problems(root: Path = ROOT) -> list[str]:
    """One line per broken rule."""
    out: list[str] = []
    size = len((root / "README.md").read_bytes())
    if size > README_LIMIT:
        out.append(f"README.md: {size} bytes, over {README_LIMIT}: move detail into docs/")
    for a, b in NO_SHARED_RUNS:
        for at_a, at_b, n in repeated_runs(root / a, root / b):
            out.append(f"{a}:{at_a}: {n} code lines repeat {b}:{at_b}: share them through the loop")
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
