"""``harness check`` and the oracle check of ``run`` and ``session``: an unsolvable scenario is named.

A scenario that even the oracle (which knows every fault) cannot solve scores 0 for every agent
and strategy. ``harness check`` says so and exits 1; ``harness run`` and ``harness session`` say
so in one line naming the subgoal before the numbers are read as a finding.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.scenarios.scenario import load_scenario
from harness.session.simulated import oracle_check
from tests.helpers.cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"

STRICT_BOOKING = """
description = "A booking that must be ISO, with a subgoal that {expect}."
tools = ["book"]
max_steps = {steps}

[task]
prompt = "Book a table for 14 March."

[[task.subgoals]]
name = "booking"
tool = "book"
arguments = {{ item = "table", date = "14/03/2025" }}
{expect_line}

[[faults]]
kind = "bad_argument"
tool = "book"
rate = 1.0
argument = "date"
valid = "2025-03-14"
"""


def _scenario(tmp_path: Path, *, expect: bool, steps: int = 20) -> Path:
    path = tmp_path / f"strict_{'with' if expect else 'without'}_{steps}.toml"
    line = 'expect = { date = "2025-03-14" }' if expect else ""
    path.write_text(
        STRICT_BOOKING.format(expect="says what the end state holds" if expect else "forgets it",
                              steps=steps, expect_line=line)
    )  # fmt: skip
    return path


def test_a_subgoal_whose_check_no_call_satisfies_is_unsolvable(tmp_path: Path) -> None:
    check = oracle_check(load_scenario(str(_scenario(tmp_path, expect=False))))
    assert not check.solved
    assert check.undone == ("booking",)
    assert "unsolvable: even the oracle cannot do subgoal 'booking' in seeds 0-2" in check.line()
    assert "expect" in check.why
    assert oracle_check(load_scenario(str(_scenario(tmp_path, expect=True)))).solved


def test_a_budget_too_small_is_named(tmp_path: Path) -> None:
    path = _scenario(tmp_path, expect=True, steps=1)
    path.write_text(
        path.read_text().replace(
            "[[faults]]",
            '[[task.subgoals]]\nname = "second"\ntool = "book"\n'
            'arguments = { item = "chair", date = "2025-03-14" }\n\n[[faults]]',
        )
    )
    check = oracle_check(load_scenario(str(path)))
    assert not check.solved
    assert check.undone == ("second",)
    # Run again with ten times the budget, the oracle succeeds: the line says how many steps it needs.
    assert "the step budget is too small for the oracle: max_steps = 1, and it needs 3 steps" in check.line()


def test_a_budget_that_more_steps_do_not_help_is_not_called_too_small(tmp_path: Path) -> None:
    # The second booking's date is never the form the fault lets through: no budget is enough.
    path = _scenario(tmp_path, expect=True, steps=1)
    second = '[[task.subgoals]]\nname = "second"\ntool = "book"\n'
    second += 'arguments = { item = "chair", date = "2025-03-15" }'
    path.write_text(path.read_text().replace("[[faults]]", second + "\n\n[[faults]]"))
    check = oracle_check(load_scenario(str(path)))
    assert not check.solved and check.undone == ("second",)
    assert "too small" not in check.line(), check.line()


def test_harness_check_names_each_problem_and_exits_2_for_a_broken_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.toml"
    bad.write_text('tools = ["book"]\nmax_steps = "many"\n')
    good, unsolvable = _scenario(tmp_path, expect=True), _scenario(tmp_path, expect=False)
    code, out, err = cli(["check", "flaky_weather", str(good), str(unsolvable), str(bad)], capsys)
    assert code == 2, err  # a broken file is a usage mistake, as for every command (README)
    lines = out.strip().splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("ok ") and "flaky_weather: solvable" in lines[0]
    # With the fault removed the tool takes 14/03/2025 as it is, which the expect rejects: the
    # fault-free baseline (what recovery is measured against) fails. A warning, not a failure, in
    # words that name the cause (not "unsolvable", and no hint to add the expect it has).
    assert lines[1].startswith("warning ") and "no fault-free baseline: with its faults removed" in lines[1]
    assert "unsolvable" not in lines[1] and "say it in the subgoal's expect" not in lines[1]
    assert "it stored date '14/03/2025', as the task gives it, where the end state expects " \
        "'2025-03-14', a form that only the bad_argument fault on book names" in lines[1]  # fmt: skip
    assert "no session of it has a recovery opportunity" in lines[1]
    assert lines[2].startswith("FAIL ") and "subgoal 'booking'" in lines[2]
    assert lines[3].startswith("FAIL ") and f"{bad}: broken" in lines[3]
    code, out, _ = cli(["check", str(good), "--json"], capsys)
    assert code == 0
    assert json.loads(out)["status"] == "baseline_unsolvable"
    code, out, _ = cli(["check", "flaky_weather", str(unsolvable)], capsys)
    assert code == 1  # every file loads; one cannot be solved
    code, out, _ = cli(["check", "--help"], capsys)
    assert "Exit 2 when one does not load" in " ".join(out.split())


def test_a_served_scenario_has_its_keys_checked_and_says_the_oracle_is_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = Path(__file__).resolve().parents[2] / "docs" / "examples" / "served_note.toml"
    code, out, err = cli(["check", str(served), "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "served" and "the oracle check needs the real server" in doc["line"]
    broken = tmp_path / "served.toml"
    broken.write_text(served.read_text().replace("max_steps = 20", 'max_steps = "many"'))
    code, out, _ = cli(["check", str(broken)], capsys)
    assert code == 2 and out.startswith("FAIL ") and "max_steps" in out
    assert "unknown key" not in out  # read as a served scenario, not as a catalogue one


def test_every_shipped_scenario_is_solvable_by_the_oracle(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["check", "--json"], capsys)
    assert code == 0, out
    statuses = {json.loads(line)["scenario"]: json.loads(line)["status"] for line in out.splitlines()}
    assert "unsolvable" not in statuses.values()


def test_run_and_session_name_the_subgoal_of_an_unsolvable_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_scenario(tmp_path, expect=False))
    code, _, err = cli(["session", path, "--json"], capsys)
    assert code == 0
    warnings = [line for line in err.splitlines() if "unsolvable" in line]
    assert len(warnings) == 1 and "subgoal 'booking'" in warnings[0]
    args = [
        "run",
        path,
        "--agents",
        "oracle",
        "--seeds",
        "2",
        "--executor",
        "serial",
        "--out",
        str(tmp_path / "r"),
    ]
    code, _, err = cli(args, capsys)
    assert code == 0
    warnings = [line for line in err.splitlines() if "unsolvable" in line]
    assert (
        len(warnings) == 1 and warnings[0].startswith("harness run: warning: ") and "'booking'" in warnings[0]
    )
    code, _, err = cli(["run", str(_scenario(tmp_path, expect=True)), "--agents", "oracle", "--seeds", "2",
                        "--executor", "serial", "--out", str(tmp_path / "r2")], capsys)  # fmt: skip
    assert "unsolvable" not in err


def test_the_readme_example_passes_check_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Solvable as written and with its faults removed: the README says it runs as written."""
    block = re.findall(r"^```toml\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)[0]
    path = tmp_path / "my_scenario.toml"
    path.write_text(block)
    code, out, _ = cli(["check", str(path), "--json"], capsys)
    assert code == 0
    assert json.loads(out)["status"] == "ok", out


def test_every_shipped_scenario_passes_check_or_says_why_in_its_description(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["check", "--json"], capsys)
    assert code == 0, out
    for line in out.splitlines():
        doc = json.loads(line)
        if doc["status"] != "ok":
            description = load_scenario(doc["scenario"]).description
            assert "without a fault-free baseline" in description, doc


def test_a_value_the_tool_cannot_serve_is_a_broken_file_naming_the_valid_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's example with Bergen for Oslo: weather has no station there. It used to load,
    fail every call, and be called unsolvable because 'the step budget ran out'."""
    block = re.findall(r"^```toml\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)[0]
    assert 'city = "Oslo"' in block
    path = tmp_path / "bergen.toml"
    path.write_text(block.replace('city = "Oslo"', 'city = "Bergen"'))
    code, out, _ = cli(["check", str(path)], capsys)
    assert code == 2
    assert "task.subgoals[0].arguments.city: weather has no station for 'Bergen' (valid cities: Oslo, " in out
    assert "step budget" not in out
