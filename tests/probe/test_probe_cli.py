"""``harness probe``: exit 0 whenever the probe ran, 2 with one line for a usage mistake."""

from __future__ import annotations

import json
import sys

import pytest
from probe_runs import HARNESS, peer

from harness.cli.main import main
from harness.cli.probe import parse_cases
from harness.errors import UserError
from harness.probe import RULES, ToolCase

DEMO = [*HARNESS, "serve", "--demo"]


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


class TestUserMistakes:
    def test_no_command(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert "say which server to probe" in _fails(["probe", "--json"], capsys)

    def test_command_not_found(self, capsys: pytest.CaptureFixture[str]) -> None:
        err = _fails(["probe", "--", "harness-no-such-server-binary"], capsys)
        assert err == "harness: error: command not found: harness-no-such-server-binary"

    def test_args_that_are_not_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        err = _fails(
            ["probe", "--tool", "weather", "--args", "{city: Atlantis}", "--", sys.executable], capsys
        )
        assert "--args for tool 'weather' is not JSON" in err

    def test_args_that_are_not_an_object(self, capsys: pytest.CaptureFixture[str]) -> None:
        err = _fails(["probe", "--tool", "weather", "--args", "[1]", "--", sys.executable], capsys)
        assert "must be a JSON object, got list" in err

    def test_a_tool_without_its_args(self, capsys: pytest.CaptureFixture[str]) -> None:
        err = _fails(["probe", "--tool", "weather", "--", sys.executable], capsys)
        assert "one --args per --tool" in err

    def test_a_non_positive_timeout(self, capsys: pytest.CaptureFixture[str]) -> None:
        err = _fails(["probe", "--timeout", "0", "--", sys.executable], capsys)
        assert err == "harness: error: --timeout must be a positive number of seconds, got 0"


class TestParseCases:
    def test_args_and_reasons_pair_with_tools_by_position(self) -> None:
        cases = parse_cases(("a", "b"), ('{"x": 1}', "{}"), ("why a", "why b"))
        assert cases == (ToolCase("a", {"x": 1}, "why a"), ToolCase("b", {}, "why b"))

    def test_one_reason_applies_to_every_tool(self) -> None:
        assert [c.reason for c in parse_cases(("a", "b"), ("{}", "{}"), ("why",))] == ["why", "why"]

    def test_a_reason_count_that_fits_neither_rule_is_refused(self) -> None:
        with pytest.raises(UserError, match="--reason once, or once per --tool"):
            parse_cases(("a", "b", "c"), ("{}", "{}", "{}"), ("x", "y"))


class TestRuns:
    def test_json_report_of_our_server(self, capsys: pytest.CaptureFixture[str]) -> None:
        argv = ["probe", "--json", "--tool", "weather", "--args", '{"city":"Atlantis"}', "--", *DEMO]
        assert main(argv) == 0
        data = json.loads(capsys.readouterr().out)
        rows = {row["id"]: row for row in data["rules"]}
        assert rows["tool.weather"]["observed"] == "isError with reason"

    def test_reason_text_decides_whether_the_reason_is_present(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        argv = ["probe", "--json", "--tool", "weather", "--args", '{"city":"Atlantis"}']
        assert main([*argv, "--reason", "no station near Atlantis", "--", *DEMO]) == 0
        assert json.loads(capsys.readouterr().out)["rules"][-1]["observed"] == "isError with reason"
        assert main([*argv, "--reason", "city not in table", "--", *DEMO]) == 0
        assert json.loads(capsys.readouterr().out)["rules"][-1]["observed"] == "isError masked"

    def test_the_table_lists_every_rule_and_a_summary(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "200")
        assert main(["probe", "--", *DEMO]) == 0
        out = capsys.readouterr().out
        assert "harness probe: harness-demo 0.1.0" in out
        assert "envelope.unparseable" in out and "version.2000-01-01" in out
        assert f"{len(RULES)} rules: " in out

    def test_the_table_reads_at_80_columns(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "80")
        assert main(["probe", "--", *DEMO]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert max(len(line) for line in lines) <= 80
        for rule in RULES:
            assert any(f"│ {rule.id} " in line for line in lines), rule.id
        assert any("│ as reference & spec " in line for line in lines)

    def test_a_server_that_dies_at_start_exits_1_with_one_line_and_its_report(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        # Issue 25: a server that completes no handshake in either era was probed as if it were one.
        argv = ["probe", "--json", "--timeout", "1", "--startup-timeout", "30", "--", *peer("exit_server")]
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 1
        out, err = capsys.readouterr()
        assert json.loads(out)["summary"]["server died"] > 0  # --json still prints the report
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith("harness: no handshake in either era: ")
        assert err.rstrip().endswith(
            "initialize and server/discover: server died: exited with code 3: exit_server: refusing to serve"
        )
