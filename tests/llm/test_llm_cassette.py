"""The cassette: keys, first answer wins, torn lines, and sessions replayed with no endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_endpoint import FakeEndpoint, careful_booker

from harness.errors import UserError
from harness.llm.cassette import Cassette, CassetteMiss, request_key
from harness.llm.client import Reply, close_clients
from harness.session.row import summary_row
from harness.session.simulated import run_session


def reply(text: str) -> Reply:
    return Reply({"choices": [{"message": {"role": "assistant", "content": text}}]}, 0.25, 1, 10, 2)


def test_the_key_is_the_sha256_of_the_canonical_request() -> None:
    a = {"model": "m", "messages": [{"role": "user", "content": "été"}], "temperature": 0.0}
    b = {"temperature": 0.0, "messages": [{"content": "été", "role": "user"}], "model": "m"}
    assert request_key(a) == request_key(b) and len(request_key(a)) == 64
    assert request_key(a) != request_key({**a, "temperature": 0.5})


def test_the_first_answer_recorded_for_a_key_is_the_one_every_reader_gets(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    one, two = Cassette(path), Cassette(path)  # two processes' views of one file
    assert one.put("k", {"q": 1}, reply("first")) == reply("first")
    assert two.put("k", {"q": 1}, reply("second")) == reply("first")
    assert Cassette(path).get("k") == reply("first")
    assert len(path.read_text().splitlines()) == 1


def test_a_torn_line_is_skipped_and_the_entries_around_it_are_read(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    Cassette(path).put("a", {}, reply("a"))
    with open(path, "a") as fh:
        fh.write('{"key": "torn", "respo')  # a writer killed mid-line
    Cassette(path).put("b", {}, reply("b"))
    fresh = Cassette(path)
    assert fresh.get("a") == reply("a") and fresh.get("b") == reply("b") and fresh.unreadable == 1


def test_a_recorded_session_replays_to_the_identical_row_with_the_endpoint_gone(tmp_path: Path) -> None:
    cassette = str(tmp_path / "c.jsonl")
    with FakeEndpoint(careful_booker) as fake:
        knobs: dict[str, Any] = {"base_url": fake.base_url, "model": "fake", "cassette": cassette}
        recorded = [
            run_session("strict_dates", "llm", s, 0, agent_params=knobs) for s in ("is_error", "collapse")
        ]
    close_clients()
    replay = {"model": "fake", "cassette": cassette, "replay": True}
    replayed = [
        run_session("strict_dates", "llm", s, 0, agent_params=replay) for s in ("is_error", "collapse")
    ]
    assert [summary_row(r) for r in replayed] == [summary_row(r) for r in recorded]
    assert recorded[0].success and not recorded[1].success and recorded[0].tokens_in > 0
    entries = [json.loads(line) for line in Path(cassette).read_text().splitlines()]
    assert len({e["key"] for e in entries}) == len(entries)
    assert all(e["key"] == request_key(e["request"]) for e in entries)


def test_replaying_a_request_not_recorded_names_its_hash_and_step(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    Cassette(cassette).put("k", {}, reply("x"))
    with pytest.raises(CassetteMiss, match=r"request sha256:[0-9a-f]{64} \(model turn 1, session step 1\)"):
        run_session(
            "strict_dates",
            "llm",
            "is_error",
            0,
            agent_params={"model": "fake", "cassette": str(cassette), "replay": True},
        )
    assert issubclass(CassetteMiss, UserError)
