"""Served sessions against the TypeScript reference filesystem server (npm; skipped without it).

The server is pinned in ``served.package.json`` beside this file and installed into the
gitignored ``.cache/served`` on first use. These are the runs of docs/real-servers.md, small.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from helpers.cli import cli
from helpers.npm import npm_install

from harness.proxy.session import run_served_session
from harness.scenarios.served import load_served

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CACHE = Path(os.environ.get("HARNESS_SERVED_CACHE", REPO / ".cache" / "served"))
PIN = HERE / "served.package.json"
NOTE = REPO / "docs" / "examples" / "served_note.toml"
TEXT_READER = f"{REPO / 'docs' / 'examples' / 'text_reader.py'}:TextReader"


@pytest.fixture(scope="module")
def filesystem() -> str:
    """``--server`` for the pinned filesystem server, rooted in the session's directory."""
    npm_install(CACHE, PIN, "the reference filesystem server")
    return f"{CACHE / 'node_modules' / '.bin' / 'mcp-server-filesystem'} {{workdir}}"


def test_the_worked_scenario_meets_its_faults_through_the_proxy(filesystem: str) -> None:
    sc = load_served(NOTE, filesystem)
    buffer = io.BytesIO()
    text_reader = run_served_session(sc, TEXT_READER, "is_error", 1, trace=buffer)
    assert (text_reader.success, text_reader.faults_rate_limited, text_reader.server) == (
        True, 1, "mcp-server-filesystem",
    )  # fmt: skip
    trace = buffer.getvalue()
    assert b'"action":"wait","seconds":5.0' in trace  # the message said how long
    assert b"harness-served-" not in trace
    lost = run_served_session(sc, TEXT_READER, "collapse", 1)
    assert (lost.success, lost.end) == (False, "gave_up")
    # The shipped reader takes "Successfully wrote to note.txt" as a whole plain-text answer (only
    # text that starts as JSON must parse), waits the 5 s the message names, writes and reads the note back.
    reader = run_served_session(sc, "reader", "is_error", 0)
    assert (reader.end, reader.correct, reader.misreported, reader.success) == ("finished", True, False, True)
    assert reader.subgoals_done == 2


def test_the_servers_own_error_text_names_the_directory_as_workdir(filesystem: str, tmp_path: Path) -> None:
    path = tmp_path / "missing.toml"
    path.write_text(
        'description = "Read a file that is not there."\nmax_steps = 3\n'
        '[task]\nprompt = "Read missing.txt."\n'
        '[[task.subgoals]]\nname = "read"\ntool = "read_text_file"\narguments = { path = "missing.txt" }\n'
    )
    sc = load_served(path, filesystem)
    traces = []
    for _ in range(2):
        buffer = io.BytesIO()
        result = run_served_session(sc, "naive", "is_error", 0, trace=buffer)
        traces.append(buffer.getvalue())
    assert result.errors_is_error == 1 and not result.success
    assert traces[0] == traces[1]
    texts = [json.loads(line) for line in traces[0].splitlines() if b"ENOENT" in line]
    assert texts and all("{workdir}/missing.txt" in json.dumps(t) for t in texts)


def test_harness_run_against_the_filesystem_server(
    filesystem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    grid = ["--agents", f"naive,{TEXT_READER}", "--strategies", "is_error,collapse", "--seeds", "2"]
    code, _, err = cli(["run", str(NOTE), "--server", filesystem, *grid, "--executor", "serial",
                        "--out", str(out), "--no-compare"], capsys)  # fmt: skip
    assert code == 0, err
    df = pd.read_parquet(out / "sessions.parquet")
    assert len(df) == 8 and set(df["server"]) == {"mcp-server-filesystem"} and set(df["status"]) == {"ok"}
