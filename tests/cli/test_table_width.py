"""The comparison table fits the terminal, and in a pipe never splits an interval across lines.

No forced width: on a terminal the table takes the terminal's width (a narrow one gets the
metric columns dealt into several tables that repeat the key columns); in a pipe (CliRunner
is one) the table is as wide as its widest row, so "0.80 [0.78, 0.82]" is always whole.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import rich.console
from click.testing import CliRunner
from rich.cells import cell_len

from harness.cli.compare import print_table
from harness.cli.main import cli
from tests.helpers.cli import run_harness

WHOLE = re.compile(r"[-+]?\d+\.\d\d \[[-+]?\d+\.\d\d, [-+]?\d+\.\d\d\]")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("width") / "run"
    args = ["run", "flaky_weather", "rate_limited_search", "--agents", "naive,reader", "--seeds", "4"]
    args += ["--strategies", "is_error,masked,collapse,escape"]  # the widths below were set for these
    args += ["--set", "faults.rate=0,0.5", "--executor", "serial", "--out", str(out), "--no-compare"]
    code, _, stderr = run_harness(args)
    assert code == 0, stderr
    return out


def _intervals_whole(text: str) -> int:
    """Every '[' on a line opens an interval that closes on that line; returns how many."""
    count = 0
    for line in text.splitlines():
        opened = line.count("[")
        assert opened == line.count("]"), f"an interval split across lines: {line!r}"
        assert len(WHOLE.findall(line)) == opened, f"an interval split across lines: {line!r}"
        count += opened
    return count


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_compare_in_a_pipe_never_splits_an_interval(run: Path, columns: str) -> None:
    result = CliRunner(env={"COLUMNS": columns}).invoke(
        cli, ["compare", str(run), "--by", "scenario,agent"], prog_name="harness"
    )
    assert result.exit_code == 0, result.output
    assert _intervals_whole(result.stdout) > 0
    rows = [ln for ln in result.stdout.splitlines() if ln.startswith("│")]
    # one line a row (scenario x agent x faults.rate x strategy), in each of the two tables: success
    # and its difference first, recovery and the tests after
    assert len(rows) == 2 * (2 * 2 * 2 * 4)


def _narrow_terminal(width: int, sink: io.StringIO) -> type[rich.console.Console]:
    class Terminal(rich.console.Console):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("width", width)
            kwargs.setdefault("file", sink)
            kwargs.setdefault("force_terminal", True)
            kwargs.setdefault("color_system", None)
            super().__init__(*args, **kwargs)

    return Terminal


def _shown(run: Path) -> pd.DataFrame:
    from harness.batch.results import load_sessions
    from harness.report.stats import compare, display_frame

    df = load_sessions(run)
    table = compare(df, by=["scenario", "agent"], baseline="is_error", k=3, unit="scenario", adjust="holm")
    return display_frame(table, 3)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_on_a_terminal_the_table_fits_and_keeps_intervals_whole(
    run: Path, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    sink = io.StringIO()
    monkeypatch.setattr(rich.console, "Console", _narrow_terminal(width, sink))
    shown = _shown(run)
    print_table(shown, title="t")
    text = sink.getvalue()
    assert max(cell_len(line) for line in text.splitlines()) <= width
    assert _intervals_whole(text) > 0
    # Every metric column is shown, and the key columns head every part.
    headers = " ".join(ln for ln in text.splitlines() if ln.startswith("┃"))
    for col in shown.columns:  # a long header wraps at its spaces: every word is there
        assert all(word in headers for word in str(col).split()), col
    assert all("scenario" in h for h in text.splitlines() if h.startswith("┃") and "strategy" in h)


def test_a_wide_terminal_gets_one_table_no_wider_than_it(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sink = io.StringIO()
    monkeypatch.setattr(rich.console, "Console", _narrow_terminal(300, sink))
    print_table(_shown(run), title="t")
    text = sink.getvalue()
    assert sum(1 for ln in text.splitlines() if ln.startswith("┏")) == 1
    assert max(cell_len(line) for line in text.splitlines()) < 300  # as wide as it needs, not forced


def test_no_forced_width_is_left_in_the_cli() -> None:
    import harness.cli as pkg

    for path in Path(pkg.__file__).parent.glob("*.py"):
        assert not re.search(r"width\s*=\s*(max\()?\s*160", path.read_text()), path.name


def test_the_comparison_by_agent_fits_120_columns_in_two_tables_even_in_a_pipe(run: Path) -> None:
    # At 8825ff0 the run's comparison was one table of 15 columns, 210 characters wide in a pipe.
    args = ["compare", str(run), "--explain"]
    result = CliRunner(env={"COLUMNS": "120"}).invoke(cli, args, prog_name="harness")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert sum(1 for ln in lines if ln.startswith("┏")) == 2
    assert max(cell_len(ln) for ln in lines) <= 120
    words = " ".join(result.stdout.split())
    assert "pass^3: the chance that 3 runs of one task" in words  # the legend, --explain
    assert "Findings" in lines and words.index("pass^3: the chance") < words.index("Findings")


def test_on_a_120_column_terminal_the_comparison_by_agent_is_two_tables(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.report.display import comparison_parts
    from harness.report.stats import compare, display_frame

    sink = io.StringIO()
    monkeypatch.setattr(rich.console, "Console", _narrow_terminal(120, sink))
    from harness.batch.results import load_sessions

    table = compare(load_sessions(run), by=["agent"], unit="scenario")
    shown = display_frame(table, 3)
    print_table(shown, title="t", parts=comparison_parts([str(c) for c in shown.columns]))
    text = sink.getvalue()
    assert sum(1 for ln in text.splitlines() if ln.startswith("┏")) == 2
    assert max(cell_len(line) for line in text.splitlines()) <= 120
