"""One session loop for every kind of session: the simulated one, the served one, the world one.

The three kinds differ in what is beneath the client and who judges the end state; the loop,
the counts, the contract an agent keeps and the row are :mod:`harness.session.loop`'s. These tests
hold that: no kind runs a loop of its own and a broken contract reads the same whatever serves the
tools. That the kinds' sources repeat no run of code is a rule of CI's lint step (``.ci/lint.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.proxy.session import _Served, run_served_session
from harness.scenarios.served import load_served
from harness.session.agent import Action, Agent, Finish, Observation, Wait
from harness.session.loop import SessionLoop
from harness.session.simulated import _Session, run_session
from harness.worlds.session import WorldSession

ROOT = Path(__file__).resolve().parents[2]
MODULES = ("harness/session/simulated.py", "harness/proxy/session.py", "harness/worlds/session.py")
SHARED = ("go", "run", "talk", "call", "execute", "give_up", "record", "count_rpc", "count_fault", "saw")
"""What every kind takes from the loop as it is: a kind that overrode one would run a loop of its own."""


@pytest.mark.parametrize("kind", [_Session, _Served, WorldSession])
def test_every_kind_of_session_runs_the_one_loop(kind: type[SessionLoop]) -> None:
    assert issubclass(kind, SessionLoop)
    own = [name for name in SHARED if name in vars(kind)]
    assert not own, f"{kind.__name__} overrides {own}"


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
