"""`harness compare` and `harness plot` on a run that is not finished say so, in every format.

A run is finished when its manifest says "complete", its rows are in sessions.parquet, and
every cell of its grid has one. Anything else (interrupted, still running or killed, rows
only in chunks/, fewer rows than the grid) is compared and plotted all the same, under a
warning, so partial rows never read as a finished comparison.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.batch.grid import Grid
from harness.batch.results import ResultsDir, load_run
from harness.batch.runner import run_batch
from tests.helpers.cli import cli

GRID = Grid(("flaky_weather",), ("naive", "reader"), ("is_error", "masked"), ("typical",), range(10))


def _stop_after(tasks: int) -> Callable[[int, int], Callable[[int], None]]:
    """A progress callback that presses Ctrl-C once ``tasks`` tasks are written."""

    def start(total: int, done: int) -> Callable[[int], None]:
        seen = 0

        def advance(n: int) -> None:
            nonlocal seen
            seen += 1
            if seen >= tasks:
                raise KeyboardInterrupt

        return advance

    return start


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("incomplete")
    finished = root / "finished"
    run_batch(GRID, finished, executor="serial", workers=1)
    interrupted = root / "interrupted"
    summary = run_batch(GRID, interrupted, executor="serial", workers=1, progress=_stop_after(3))
    assert summary.interrupted
    # Killed mid-run: the manifest still says "running" and the rows are only in chunks/.
    killed = root / "killed"
    shutil.copytree(interrupted, killed)
    manifest = json.loads((killed / "manifest.json").read_text())
    manifest["status"] = "running"
    (killed / "manifest.json").write_text(json.dumps(manifest))
    # Says "complete", but the grid has more cells than rows (say, an edited manifest).
    short = root / "short"
    shutil.copytree(finished, short)
    manifest = json.loads((short / "manifest.json").read_text())
    manifest["grid"]["seeds"] = {"start": 0, "stop": 12}
    manifest["sessions_in_grid"] = len(GRID) // 10 * 12
    (short / "manifest.json").write_text(json.dumps(manifest))
    return {"finished": finished, "interrupted": interrupted, "killed": killed, "short": short}


def test_the_run_state_says_why_a_run_is_not_finished(runs: dict[str, Path]) -> None:
    assert ResultsDir.open(runs["finished"]).state().complete is True
    interrupted = ResultsDir.open(runs["interrupted"]).state()
    assert (interrupted.complete, interrupted.status) == (False, "interrupted")
    assert (interrupted.sessions, interrupted.sessions_in_grid) == (12, 40)
    assert any("no sessions.parquet yet, 6 chunks" in r for r in interrupted.reasons)
    killed = ResultsDir.open(runs["killed"]).state()
    assert (killed.complete, killed.status) == (False, "running")
    short = ResultsDir.open(runs["short"]).state()
    assert (short.complete, short.status, short.sessions, short.sessions_in_grid) == (
        False,
        "complete",
        40,
        48,
    )
    assert short.reasons == ("8 sessions of the grid have no row",)


def test_a_sessions_parquet_given_directly_answers_for_its_run(runs: dict[str, Path], tmp_path: Path) -> None:
    _, state = load_run(runs["short"] / "sessions.parquet")
    assert state.complete is False
    loose = tmp_path / "loose.parquet"
    shutil.copy(runs["finished"] / "sessions.parquet", loose)
    _, state = load_run(loose)
    assert state.complete is None  # no manifest: nothing to tell, and no warning
    assert state.warning(loose) == ""


def test_json_says_complete_true_and_the_status_for_a_finished_run(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["compare", str(runs["finished"]), "--format", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert (data["complete"], data["status"]) == (True, "complete")
    assert (data["sessions"], data["sessions_in_grid"]) == (40, 40)
    assert "warning" not in data
    assert "warning" not in err.lower()


@pytest.mark.parametrize(
    ("run", "status"), [("interrupted", "interrupted"), ("killed", "running"), ("short", "complete")]
)
def test_json_says_complete_false_and_the_manifests_status(
    runs: dict[str, Path], run: str, status: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["compare", str(runs[run]), "--format", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["complete"] is False
    assert data["status"] == status
    assert "INCOMPLETE RUN" in data["warning"]
    assert data["rows"]


@pytest.mark.parametrize("run", ["interrupted", "killed", "short"])
def test_the_table_warns_above_it_and_in_its_title(
    runs: dict[str, Path], run: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(["compare", str(runs[run])], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("WARNING: INCOMPLETE RUN")
    assert f"harness run --resume --out {runs[run]}" in lines[0]
    assert ("If it is no longer running (killed)" in lines[0]) == (run == "killed")
    assert lines[1].startswith("INCOMPLETE RUN (")  # the table's title
    assert "strategy comparison" in lines[1]


def test_markdown_warns_above_the_table(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["compare", str(runs["interrupted"]), "--format", "markdown"], capsys)
    assert code == 0
    first, blank, caption, blank2, header = out.splitlines()[:5]
    assert first.startswith("> **Warning:** INCOMPLETE RUN: 12 of 40 sessions, status 'interrupted'")
    assert blank == blank2 == ""
    assert caption.startswith("Baseline is_error; unit of inference: scenario")  # the table's title
    assert header.startswith("| agent |")


def test_csv_warns_on_stderr_and_keeps_stdout_csv(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["compare", str(runs["interrupted"]), "--format", "csv"], capsys)
    assert code == 0
    assert out.splitlines()[0].startswith("agent,strategy,n,")
    assert "INCOMPLETE" not in out
    assert err.startswith("harness: warning: INCOMPLETE RUN: 12 of 40 sessions")


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_a_finished_run_has_no_warning(
    runs: dict[str, Path], fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["compare", str(runs["finished"]), "--format", fmt], capsys)
    assert code == 0
    assert "INCOMPLETE" not in out + err
    assert "warning" not in (out + err).lower()


def test_plot_warns_and_titles_the_figures_incomplete(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.report.plots as plots

    seen: list[str] = []
    draw_all = plots.draw_all

    def spy(df: object, out: Path, run: str) -> list[Path]:
        seen.append(run)
        return draw_all(df, out, run)  # type: ignore[arg-type]

    monkeypatch.setattr(plots, "draw_all", spy)
    code, out, err = cli(["plot", str(runs["interrupted"]), "--out", str(tmp_path / "p")], capsys)
    assert code == 0
    assert err.startswith("harness: warning: INCOMPLETE RUN: 12 of 40 sessions, status 'interrupted'")
    assert seen == ["interrupted (INCOMPLETE: 12 of 40 sessions, status interrupted)"]
    assert out.split()  # the PNGs are still drawn
    code, _, err = cli(["plot", str(runs["finished"]), "--out", str(tmp_path / "q")], capsys)
    assert code == 0
    assert "warning" not in err
    assert seen[-1] == "finished"
