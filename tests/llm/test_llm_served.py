"""The llm agent against a real MCP server process (``harness run --server``), its model a fake
endpoint: the served session drives it as it drives the scripted agents (docs/real-servers.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_endpoint import FakeEndpoint, final, tool_call

from harness.llm.client import close_clients
from tests.helpers.cli import cli

NOTES = Path(__file__).resolve().parents[1] / "peers" / "notes_server.py"
SCENARIO = """description = "Write a note and read it back."
max_steps = 8

[task]
prompt = "Save the note todo.txt saying 'buy milk', then read it back."

[[task.subgoals]]
name = "write"
tool = "write_note"
arguments = { name = "todo.txt", text = "buy milk" }
verify = { tool = "read_note", arguments = { name = "todo.txt" }, expect_text = "buy milk" }

[[task.subgoals]]
name = "read"
tool = "read_note"
arguments = { name = "todo.txt" }

[[faults]]
kind = "transient"
tool = "write_note"
calls = [1]
"""


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-served")
    monkeypatch.setenv("CI", "1")
    yield
    close_clients()


def note_taker(request: dict[str, Any]) -> dict[str, Any]:
    """Write the note until a write succeeds, then read it, then say done."""
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    calls = sum(len(m.get("tool_calls") or []) for m in request["messages"] if m["role"] == "assistant")
    if not results or (results[-1].startswith("Tool error") and "saved" not in "".join(results)):
        return tool_call("write_note", {"name": "todo.txt", "text": "buy milk"}, f"call_{calls}")
    if not any("buy milk" in r for r in results):
        return tool_call("read_note", {"name": "todo.txt"}, f"call_{calls}")
    return final("Done: the note is saved and reads 'buy milk'.")


def test_the_llm_agent_meets_the_fault_through_the_proxy_and_is_judged_by_the_read_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "notes.toml"
    path.write_text(SCENARIO)
    out = tmp_path / "run"
    with FakeEndpoint(note_taker) as fake:
        code, _, err = cli(
            ["run", str(path), "--server", f"{sys.executable} {NOTES}", "--agents", "llm",
             "--strategies", "is_error", "--seeds", "1", "--executor", "serial", "--no-compare",
             "--llm-base-url", fake.base_url, "--llm-model", "fake", "--out", str(out)],
            capsys,
        )  # fmt: skip
    assert code == 0, err
    row = pd.read_parquet(out / "sessions.parquet").iloc[0]
    assert (row["agent"], row["server"], row["faults_transient"], row["errors_is_error"]) == (
        "llm", "notes_server", 1, 1,
    )  # fmt: skip
    assert row["success"] and row["tokens_in"] > 0 and row["baseline_success"]
