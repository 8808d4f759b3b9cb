"""``harness read``: text arguments, ``--jsonl`` files and stdin, ``--format jsonl``, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.cli.main import cli

KEYS = ["category", "argument", "expected", "retry_after_s", "actionable", "instruction"]


def harness(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["read", *args], input=stdin)


def error_lines(result: Result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("harness: error: ")]


class TestTexts:
    def test_each_text_gets_one_readable_line_in_order(self) -> None:
        result = harness(
            "MCP error -32602: Expected array, received string at entities",
            "fetch failed",
            "Too many requests, retry after 30s",
            'call delete_all with {"x": 1}',
        )
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert len(lines) == 4
        assert lines[0].split() == [
            "bad_argument",
            "argument:",
            "entities",
            "expected:",
            "array",
            "actionable",
        ]
        assert lines[1].split() == ["transient", "not", "actionable"]
        assert "retry after 30 s" in lines[2] and lines[2].startswith("rate_limited")
        assert 'asks to call: delete_all {"x": 1}' in lines[3]

    def test_a_newline_inside_a_value_stays_on_its_line(self) -> None:
        result = harness("Invalid value. Expected a\nb")
        assert result.exit_code == 0 and len(result.stdout.splitlines()) == 1

    def test_arguments_and_tools_help_the_reading(self) -> None:
        text = "Start index is required; call list_items first"
        result = harness(
            text, "--arguments", '{"startIndex": null}', "--tools", "list_items,other", "--format", "jsonl"
        )
        doc = json.loads(result.stdout)
        assert (doc["argument"], doc["instruction"]["tool"]) == ("startIndex", "list_items")

    def test_format_jsonl_gives_one_object_per_text_with_the_keys_in_order(self) -> None:
        texts = ["fetch failed", "ENOENT: no such file or directory, open '/x'", "", "Unknown tool: x"]
        result = harness(*texts, "--format", "jsonl")
        docs = [json.loads(line) for line in result.stdout.splitlines()]
        assert [list(d) for d in docs] == [KEYS] * 4
        assert [d["category"] for d in docs] == ["transient", "not_found", "unknown", "unknown_tool"]

    def test_format_json_is_one_array(self) -> None:
        result = harness("fetch failed", "429 Too Many Requests", "--format", "json")
        assert [d["category"] for d in json.loads(result.stdout)] == ["transient", "rate_limited"]


class TestJsonl:
    def test_a_file_of_objects_reads_in_order_with_their_arguments_and_tools(self, tmp_path: Path) -> None:
        lines = [
            {"text": "Required at path", "arguments": {}},
            {"text": "fetch failed"},
            {"text": "Use search_v2 instead", "tools": ["search_v2"]},
        ]
        path = tmp_path / "in.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
        result = harness("--jsonl", str(path), "--format", "jsonl")
        assert result.exit_code == 0, result.output
        docs = [json.loads(line) for line in result.stdout.splitlines()]
        assert [d["category"] for d in docs] == ["missing_argument", "transient", "unknown"]
        assert docs[0]["argument"] == "path" and docs[2]["instruction"] == {
            "tool": "search_v2",
            "arguments": {},
        }

    def test_dash_reads_stdin(self) -> None:
        result = harness(
            "--jsonl", "-", "--format", "jsonl", stdin='{"text": "connect ECONNREFUSED 1.2.3.4:5"}\n'
        )
        assert result.exit_code == 0 and json.loads(result.stdout)["category"] == "transient"

    @pytest.mark.parametrize(
        ("content", "says"),
        [
            ('{"text": "fetch failed"}\nnot json\n', "stdin:2: not JSON"),
            ('{"text": "fetch failed"}\n\n{"texts": "x"}\n', "stdin:3: no 'text' key"),
            ('{"text": 5}\n', "stdin:1: 'text' is int, not a string"),
            ('["fetch failed"]\n', "stdin:1: expected a JSON object"),
            ('{"text": "x", "arguments": [1]}\n', "stdin:1: 'arguments' must be a JSON object"),
            ('{"text": "x", "tools": "a,b"}\n', "stdin:1: 'tools' must be a list of strings"),
        ],
    )
    def test_a_bad_line_is_one_error_naming_its_number_and_nothing_is_printed(
        self, content: str, says: str
    ) -> None:
        result = harness("--jsonl", "-", stdin=content)
        assert result.exit_code == 2
        assert len(error_lines(result)) == 1 and says in error_lines(result)[0]
        assert result.stderr.strip() == error_lines(result)[0] and "Traceback" not in result.output
        assert result.stdout == ""

    def test_a_missing_file_is_named(self, tmp_path: Path) -> None:
        result = harness("--jsonl", str(tmp_path / "nope.jsonl"))
        assert result.exit_code == 2 and "no such file" in error_lines(result)[0]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "say what to read"),
        (["x", "--jsonl", "-"], "not both"),
        (["x", "--arguments", "{"], "--arguments is not JSON"),
        (["x", "--arguments", "[1]"], "must be a JSON object"),
        (["x", "--split", "dev"], "--split goes with --evaluate"),
        (["x", "--dataset", "library"], "--dataset goes with --evaluate"),
        (["--evaluate", "--dataset", "web"], "'--dataset'"),
        (["--evaluate", "x"], "--evaluate reads the corpus"),
        (["--evaluate", "--format", "jsonl"], "not jsonl"),
        (["--evaluate", "--split", "all", "--misses"], "lists texts of one split"),
        (["--evaluate", "--split", "test"], "is 'dev' now"),
        (["--evaluate", "--split", "nope"], "not a split"),
        (["--format", "xml", "x"], "'--format'"),
    ],
)
def test_a_usage_mistake_is_one_error_line_and_exit_2(args: list[str], says: str) -> None:
    result = harness(*args)
    assert result.exit_code == 2, result.output
    assert len(error_lines(result)) == 1 and says in error_lines(result)[0], result.stderr
