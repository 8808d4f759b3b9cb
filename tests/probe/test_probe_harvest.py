"""``harness probe --harvest FILE``: every error the server answered, one JSON object per line.

Harvested from our own demo server, whose answers are known: each line has exactly the harvest
keys, with sane values; ``--calls`` adds the calls of a TOML file after the rules; without
``--harvest`` nothing changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from probe_runs import HARNESS

from harness.cli.main import main
from harness.errors import UserError
from harness.probe.harvest import (
    HARVEST_KEYS,
    IS_ERROR,
    JSONRPC,
    RESULT,
    STACKS,
    ExtraCall,
    HarvestRecord,
    load_calls,
    record_of,
    result_record,
)
from harness.probe.steps import UNKNOWN_TOOL

DEMO = [*HARNESS, "serve", "--demo"]

CALLS = """
[[calls]]
tool = "weather"
arguments = { city = "Atlantis" }

[[calls]]
tool = "add"
arguments_json = '{"x": null, "y": 2}'

[[calls]]
tool = "add"
arguments = { x = 1, y = 2 }
timeout = 10
"""


def _harvest(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


class TestHarvestFromTheDemoServer:
    def test_every_line_has_exactly_the_harvest_keys_with_sane_values(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "demo.jsonl"
        _, err = _run(
            ["probe", "--json", "--harvest", str(out), "--stack", "python-sdk", "--", *DEMO], capsys
        )
        lines = _harvest(out)
        assert lines
        for line in lines:
            assert list(line) == list(HARVEST_KEYS)
            assert line["server"] == "harness-demo" and line["version"] == "0.1.0"
            assert line["stack"] == "python-sdk"
            assert line["channel"] in (IS_ERROR, JSONRPC)
            if line["channel"] == IS_ERROR:
                assert line["code"] is None and isinstance(line["tool"], str)
            else:
                assert isinstance(line["code"], int)
            assert isinstance(line["text"], str) and line["text"]
            if line["tool"] is None:
                assert line["arguments"] is None
            else:
                assert isinstance(line["arguments"], dict)
        assert err == f"harness: harvest: {len(lines)} errors from harness-demo written to {out}\n"

    def test_it_holds_what_the_rules_provoked(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "demo.jsonl"
        _run(["probe", "--harvest", str(out), "--", *DEMO], capsys)
        lines = _harvest(out)
        said = {(ln["tool"], ln["channel"], ln["code"], ln["text"]) for ln in lines}
        assert (UNKNOWN_TOOL, JSONRPC, -32601, f"unknown tool '{UNKNOWN_TOOL}'") in said
        missing = "invalid arguments for tool 'add': missing required argument 'x'"
        assert ("add", IS_ERROR, None, f"ERROR: {missing}") in said  # 2025-11-25: a tool error
        assert ("add", JSONRPC, -32602, missing) in said  # 2025-06-18: a protocol error
        assert (None, JSONRPC, -32601, "method not found: harness/probe_no_such_method") in said
        assert all(ln["stack"] == "other" for ln in lines)  # the default

    def test_server_name_replaces_the_server_info_name(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out = tmp_path / "demo.jsonl"
        _, err = _run(["probe", "--harvest", str(out), "--server-name", "lab", "--", *DEMO], capsys)
        assert {ln["server"] for ln in _harvest(out)} == {"lab"}
        assert "errors from lab written" in err

    def test_the_report_is_the_same_with_and_without_it(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        plain, err = _run(["probe", "--json", "--", *DEMO], capsys)
        assert err == ""
        harvested, _ = _run(["probe", "--json", "--harvest", str(tmp_path / "h.jsonl"), "--", *DEMO], capsys)
        assert json.loads(harvested) == json.loads(plain)


class TestCalls:
    def test_extra_calls_come_after_the_rules_with_their_arguments_as_sent(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        calls, out = tmp_path / "calls.toml", tmp_path / "demo.jsonl"
        calls.write_text(CALLS, encoding="utf-8")
        _, err = _run(["probe", "--harvest", str(out), "--calls", str(calls), "--", *DEMO], capsys)
        lines = _harvest(out)
        assert lines[-2:] == [
            {
                "server": "harness-demo",
                "version": "0.1.0",
                "stack": "other",
                "tool": "weather",
                "arguments": {"city": "Atlantis"},
                "channel": IS_ERROR,
                "code": None,
                "text": "ERROR: no station near Atlantis",
            },
            {
                "server": "harness-demo",
                "version": "0.1.0",
                "stack": "other",
                "tool": "add",
                "arguments": {"x": None, "y": 2},
                "channel": IS_ERROR,
                "code": None,
                "text": "ERROR: invalid arguments for tool 'add': argument 'x' must be integer",
            },
        ]
        assert err.endswith("; 2 of 3 extra calls got an error, not: #3 add (result)\n")

    def test_a_call_made_to_fail_keeps_an_ordinary_result_on_the_result_channel(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        calls, out = tmp_path / "calls.toml", tmp_path / "demo.jsonl"
        calls.write_text(CALLS.replace("timeout = 10", "timeout = 10\nexpect_error = true"), encoding="utf-8")
        _, err = _run(["probe", "--harvest", str(out), "--calls", str(calls), "--", *DEMO], capsys)
        last = _harvest(out)[-1]
        assert (last["tool"], last["arguments"], last["channel"], last["code"]) == (
            "add",
            {"x": 1, "y": 2},
            RESULT,
            None,
        )
        assert last["text"] == "3"
        assert err.endswith(
            "; 2 of 3 extra calls got an error, 1 an ordinary result kept as made to fail (expect_error)\n"
        )

    def test_calls_need_the_harvest(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        calls = tmp_path / "calls.toml"
        calls.write_text(CALLS, encoding="utf-8")
        with pytest.raises(SystemExit) as exc:
            main(["probe", "--calls", str(calls), "--", *DEMO])
        assert exc.value.code == 2
        assert "--calls is for the harvest: give --harvest FILE with it" in capsys.readouterr().err

    def test_a_stack_outside_the_list_is_a_usage_mistake(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit) as exc:
            main(["probe", "--harvest", str(tmp_path / "h.jsonl"), "--stack", "rust", "--", *DEMO])
        assert exc.value.code == 2
        assert not (tmp_path / "h.jsonl").exists()


class TestLoadCalls:
    def test_a_file_of_calls(self, tmp_path: Path) -> None:
        path = tmp_path / "calls.toml"
        path.write_text(CALLS, encoding="utf-8")
        assert load_calls(path) == (
            ExtraCall("weather", {"city": "Atlantis"}),
            ExtraCall("add", {"x": None, "y": 2}),
            ExtraCall("add", {"x": 1, "y": 2}, 10.0),
        )

    @pytest.mark.parametrize(
        ("text", "said"),
        [
            ('[[calls]]\ntool = "a"\nargs = {}\n', "calls[1]: unknown key 'args'"),
            ("[[calls]]\narguments = {}\n", "calls[1]: 'tool' must be a tool's name"),
            ('[[calls]]\ntool = "a"\narguments = 3\n', "calls[1]: 'arguments' must be a table"),
            ('[[calls]]\ntool = "a"\narguments = {}\narguments_json = "{}"\n', "not both"),
            ('[[calls]]\ntool = "a"\narguments_json = "[1]"\n', "must be a JSON object in a string"),
            ('[[calls]]\ntool = "a"\ntimeout = 0\n', "'timeout' must be a positive number"),
            ('[[calls]]\ntool = "a"\nexpect_error = "yes"\n', "'expect_error' must be true or false"),
            ('[[calls]]\ntool = "a"\narguments = { day = 2025-03-14 }\n', "a value JSON cannot carry"),
            ('tool = "a"\n', "unknown key 'tool' (only [[calls]] tables)"),
            ("[[calls]\n", "not TOML"),
        ],
    )
    def test_a_mistake_names_the_file_and_the_call(self, tmp_path: Path, text: str, said: str) -> None:
        path = tmp_path / "calls.toml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(UserError, match=r"--calls .*calls\.toml") as exc:
            load_calls(path)
        assert said in str(exc.value)


class TestRecordOf:
    CALL: ClassVar[dict[str, Any]] = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"a": 1}},
    }

    def test_an_is_error_result_joins_its_text_items(self) -> None:
        content = [
            {"type": "text", "text": "one"},
            {"type": "image", "data": ""},
            {"type": "text", "text": "two"},
        ]
        reply = {"jsonrpc": "2.0", "id": 3, "result": {"content": content, "isError": True}}
        assert record_of(self.CALL, reply) == HarvestRecord("t", {"a": 1}, IS_ERROR, None, "one\ntwo")

    def test_a_json_rpc_error_keeps_its_code_and_string_data(self) -> None:
        reply = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "failed", "data": "why"}}
        assert record_of(self.CALL, reply) == HarvestRecord("t", {"a": 1}, JSONRPC, -32603, "failed\nwhy")
        reply["error"]["data"] = {"detail": "structured"}
        assert record_of(self.CALL, reply) == HarvestRecord("t", {"a": 1}, JSONRPC, -32603, "failed")

    def test_an_error_to_another_request_names_no_tool(self) -> None:
        reply = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "x/y"}
        assert record_of(request, reply) == HarvestRecord(None, None, JSONRPC, -32601, "Method not found")
        assert record_of(None, reply) == HarvestRecord(None, None, JSONRPC, -32601, "Method not found")

    def test_a_success_is_no_error(self) -> None:
        reply = {"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": False}}
        assert record_of(self.CALL, reply) is None

    def test_an_ordinary_result_is_kept_only_for_a_call_made_to_fail(self) -> None:
        reply = {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"content": [{"type": "text", "text": "no such table"}]},
        }
        made_to_fail = ExtraCall("t", {"a": 1}, expect_error=True)
        assert result_record(made_to_fail, reply) == HarvestRecord(
            "t", {"a": 1}, RESULT, None, "no such table"
        )
        assert result_record(ExtraCall("t", {"a": 1}), reply) is None
        flagged = {"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": True}}
        assert result_record(made_to_fail, flagged) is None  # record_of keeps it, as isError
        error = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "failed"}}
        assert result_record(made_to_fail, error) is None

    def test_the_stacks_of_the_corpus_are_offered(self) -> None:
        assert STACKS == ("typescript-sdk", "python-sdk", "fastmcp", "go", "other")
