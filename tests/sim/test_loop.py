"""One session loop for every kind of session: the simulated one, the served one, the world one.

The three kinds differ in what is beneath the client and who judges the end state; the loop,
the counts, the contract an agent keeps and the row are :mod:`harness.sim.loop`'s. These tests
hold that: no kind runs a loop of its own, the sources repeat no run of code, and a broken
contract reads the same whatever serves the tools.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.proxy.session import _Served, run_served_session
from harness.sim.agent import Action, Agent, Finish, Observation, Wait
from harness.sim.loop import SessionLoop
from harness.sim.served import load_served
from harness.sim.session import _Session, run_session
from harness.worlds.session import WorldSession

ROOT = Path(__file__).resolve().parents[2]
MODULES = ("harness/sim/session.py", "harness/proxy/session.py", "harness/worlds/session.py")
SHARED = ("go", "run", "talk", "call", "execute", "give_up", "record", "count_rpc", "count_fault", "saw")
"""What every kind takes from the loop as it is: a kind that overrode one would run a loop of its own."""


@pytest.mark.parametrize("kind", [_Session, _Served, WorldSession])
def test_every_kind_of_session_runs_the_one_loop(kind: type[SessionLoop]) -> None:
    assert issubclass(kind, SessionLoop)
    own = [name for name in SHARED if name in vars(kind)]
    assert not own, f"{kind.__name__} overrides {own}"


def _code_lines(path: Path) -> list[tuple[int, str]]:
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


def repeated_runs(a: Path, b: Path, least: int = 3) -> list[tuple[int, int, int]]:
    """Runs of at least ``least`` consecutive code lines that ``a`` and ``b`` both have:
    (line in a, line in b, length)."""
    left, right = _code_lines(a), _code_lines(b)
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


def test_the_simulated_and_the_served_session_repeat_no_run_of_code() -> None:
    # At 6206a67 harness/proxy/session.py repeated harness/sim/session.py in 29 such runs (the
    # loop, the call accounting, the baseline and the record, twice); they are harness/sim/loop.py.
    runs = repeated_runs(ROOT / "harness/proxy/session.py", ROOT / "harness/sim/session.py")
    assert runs == [], runs


def test_the_run_finder_finds_a_planted_run(tmp_path: Path) -> None:
    body = "x = 1\ny = x + 1\nz = y * 2\n"
    (tmp_path / "a.py").write_text("import os\n" + body + "print(z)\n")
    (tmp_path / "b.py").write_text("w = 0\n# a comment\n" + body)
    assert repeated_runs(tmp_path / "a.py", tmp_path / "b.py") == [(2, 3, 3)]


# -- one contract whatever serves the tools -----------------------------------------------------


class WaitsBackwards(Agent):
    """Asks to wait -3 seconds, then finishes: a broken contract (virtual time only goes forward)."""

    name = "waits-backwards"

    def reset(self, task: Any, tools: Any, seed: int) -> None:
        self.acted = 0

    def act(self, observation: Observation) -> Action:
        self.acted += 1
        return Wait(-3) if self.acted == 1 else Finish()


NOTES = ROOT / "tests" / "peers" / "notes_server.py"
SERVED = f"""
description = "Read a note."
max_steps = 5

[server]
command = {json.dumps([sys.executable, str(NOTES)])}
name = "notes"

[task]
prompt = "Read todo.txt."

[[task.subgoals]]
name = "read"
tool = "read_note"
arguments = {{ name = "todo.txt" }}
"""


def test_a_broken_contract_reads_the_same_in_a_simulated_and_a_served_session(tmp_path: Path) -> None:
    # A served session clamped the wait to 0 and went on; now both refuse it, naming the wait.
    path = tmp_path / "notes.toml"
    path.write_text(SERVED)
    served = run_served_session(load_served(path), WaitsBackwards(), "is_error", 0)
    simulated = run_session("flaky_weather", WaitsBackwards(), "is_error", 0)
    for row in (served, simulated):  # (the simulated scenario has faults: its baseline broke first)
        assert row.status == "harness_error"
        assert "AgentContractError: " in row.error
        assert "returned Wait(-3); a wait is a finite number" in row.error
