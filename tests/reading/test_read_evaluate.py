"""``harness read --evaluate``: every field, overall and per stack, for every split.

No accuracy is asserted for the dev split: it is a measurement (``docs/reading.md``). The held-out
split is never read here: it is evaluated once, by hand, under the protocol in docs/reading.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.fixtures.corpus import ECOSYSTEMS, library_texts, messages
from harness.reading import FIELDS, Reading, agrees, evaluate, same_expected

SPLITS = {"train": "train", "dev": "dev", "all": None}


def _messages(split: str | None) -> tuple[Any, ...]:
    """A split's messages; "all" is what was looked at (train and dev), never the held-out split."""
    return messages(split) if split is not None else messages("train") + messages("dev")


@pytest.mark.parametrize("split", list(SPLITS))
def test_the_evaluation_reports_every_field_overall_and_per_stack(split: str) -> None:
    records = _messages(SPLITS[split])
    result = evaluate(records, split=split)
    doc = result.to_json()
    assert doc["split"] == split and doc["messages"] == len(records) > 0
    assert list(doc["overall"]) == list(FIELDS)
    for scores in doc["overall"].values():
        assert scores["total"] == len(records) and 0 <= scores["correct"] <= len(records)
        assert 0.0 <= scores["accuracy"] <= 1.0
    assert set(doc["by_stack"]) == {m.stack for m in records}
    assert sum(s["messages"] for s in doc["by_stack"].values()) == len(records)
    for stack in doc["by_stack"].values():
        assert set(FIELDS) <= set(stack)
    for field in FIELDS:
        assert sum(s[field]["correct"] for s in doc["by_stack"].values()) == doc["overall"][field]["correct"]


@pytest.mark.parametrize("split", list(SPLITS))
def test_the_command_prints_the_same_figures_as_json_and_as_a_table(split: str) -> None:
    runner = CliRunner()
    as_json = runner.invoke(cli, ["read", "--evaluate", "--split", split, "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    doc = json.loads(as_json.stdout)
    assert doc == evaluate(_messages(SPLITS[split]), split=split).to_json()
    table = runner.invoke(cli, ["read", "--evaluate", "--split", split])
    lines = table.stdout.splitlines()
    assert lines[0].startswith(
        f"reader against the hand annotations, split {split}: {doc['messages']} messages"
    )
    assert [line.split()[0] for line in lines[2:7]] == list(FIELDS)
    for stack in doc["by_stack"]:
        assert stack in lines[1]


@pytest.mark.parametrize("split", list(SPLITS))
def test_the_library_texts_are_measured_per_ecosystem(split: str) -> None:
    runner = CliRunner()
    result = runner.invoke(
        cli, ["read", "--evaluate", "--dataset", "library", "--split", split, "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    records = library_texts(SPLITS[split])
    assert doc == evaluate(records, split=split).to_json()
    assert set(doc["by_stack"]) == {t.ecosystem for t in records} and set(doc["by_stack"]) <= set(ECOSYSTEMS)
    table = runner.invoke(cli, ["read", "--evaluate", "--dataset", "library", "--split", split])
    lines = table.stdout.splitlines()
    assert lines[0].startswith(f"reader against the library texts' hand annotations, split {split}:")
    assert [line.split()[0] for line in lines[2:7]] == list(FIELDS)


def test_both_datasets_are_reported_each_in_its_own_right() -> None:
    runner = CliRunner()
    result = runner.invoke(
        cli, ["read", "--evaluate", "--dataset", "both", "--split", "dev", "--format", "json"]
    )
    doc = json.loads(result.stdout)
    assert list(doc) == ["corpus", "library"]
    assert doc["corpus"] == evaluate(messages("dev"), split="dev").to_json()
    assert doc["library"] == evaluate(library_texts("dev"), split="dev").to_json()
    table = runner.invoke(cli, ["read", "--evaluate", "--dataset", "both", "--split", "dev"]).stdout
    assert table.count("reader against") == 2 and "library texts" in table
    default = runner.invoke(cli, ["read", "--evaluate", "--split", "dev", "--format", "json"])
    assert json.loads(default.stdout) == doc["corpus"]


def test_misses_of_the_library_splits_name_their_texts() -> None:
    runner = CliRunner()
    for split in ("train", "dev"):
        misses = runner.invoke(
            cli, ["read", "--evaluate", "--dataset", "library", "--split", split, "--misses"]
        )
        assert misses.exit_code == 0 and f"split {split}" in misses.stdout


def test_the_default_split_is_train_and_misses_are_listed_one_split_at_a_time() -> None:
    runner = CliRunner()
    default = runner.invoke(cli, ["read", "--evaluate", "--format", "json"])
    assert json.loads(default.stdout)["split"] == "train"
    misses = runner.invoke(cli, ["read", "--evaluate", "--split", "train", "--misses"])
    assert misses.exit_code == 0
    refused = runner.invoke(cli, ["read", "--evaluate", "--split", "all", "--misses"])
    assert refused.exit_code == 2 and "one split" in refused.stderr


def test_the_split_once_called_test_is_dev_and_asking_for_it_says_so() -> None:
    refused = CliRunner().invoke(cli, ["read", "--evaluate", "--split", "test"])
    assert refused.exit_code == 2
    assert "is 'dev' now" in refused.stderr and "not held out" not in refused.stderr
    assert "held-out split is 'heldout'" in refused.stderr


def test_the_library_texts_have_no_held_out_split() -> None:
    refused = CliRunner().invoke(cli, ["read", "--evaluate", "--dataset", "library", "--split", "heldout"])
    assert refused.exit_code == 2 and "only the corpus" in refused.stderr


@dataclass(frozen=True)
class Note:
    text: str
    arguments: Any
    stack: str
    category: str
    argument: str | None
    expected: str | None
    retry_after_s: float | None
    actionable: bool


def test_agreements_are_counted_per_field_and_per_stack() -> None:
    notes = [
        Note("fetch failed", {}, "a", "transient", None, None, None, False),
        Note("Retry-After: 10 (rate limit)", {}, "a", "rate_limited", None, None, 10.3, True),
        Note(
            "Expected string, received number at q",
            {"q": 1},
            "b",
            "bad_argument",
            "q",
            "a string",
            None,
            False,
        ),
    ]
    doc = evaluate(notes, split="fake").to_json()
    assert doc["overall"]["category"] == {"correct": 3, "total": 3, "accuracy": 1.0}
    assert doc["overall"]["retry_after_s"]["correct"] == 3  # 10 against 10.3: within 0.5 s
    assert doc["overall"]["actionable"]["correct"] == 2
    assert doc["by_stack"]["b"]["actionable"] == {"correct": 0, "total": 1, "accuracy": 0.0}
    assert doc["by_stack"]["a"]["messages"] == 2


@pytest.mark.parametrize(
    ("found", "annotated"),
    [
        ("string", "a string"),
        ("URL", "a valid URL"),
        ("<=10", "<= 10"),
        (">= 1", "greater than or equal to 1"),
        (">= 1 elements", "at least 1 element(s)"),
        ("one of: b, a", "one of: a, b"),
        ("one of: a | b", "one of: 'a', 'b'"),
        ("int", "integer"),
        ("dictionary", "object"),
        ('"name", "id"', "name, id"),
        (None, None),
    ],
)
def test_expected_values_that_say_the_same_agree(found: str | None, annotated: str | None) -> None:
    assert same_expected(found, annotated)


@pytest.mark.parametrize(
    ("found", "annotated"),
    [("string", "number"), ("<= 10", "< 10"), ("one of: a, b", "one of: a, c"), ("x", None), (None, "x")],
)
def test_expected_values_that_differ_do_not(found: str | None, annotated: str | None) -> None:
    assert not same_expected(found, annotated)


def test_a_retry_agrees_within_half_a_second_and_null_only_with_null() -> None:
    note = Note("", {}, "a", "unknown", None, None, 5.0, False)
    assert agrees("retry_after_s", Reading(retry_after_s=5.4), note)
    assert not agrees("retry_after_s", Reading(retry_after_s=5.6), note)
    assert not agrees("retry_after_s", Reading(), note)
    with pytest.raises(ValueError, match="unknown field"):
        agrees("colour", Reading(), note)


def test_the_table_says_what_it_is_worth_and_gives_each_server_a_row() -> None:
    records = messages("dev")
    lines = CliRunner().invoke(cli, ["read", "--evaluate", "--split", "dev"]).stdout.splitlines()
    named = [r for r in records if r.argument is not None]
    assert any(
        line.startswith("argument where the text names one:") and f"/{len(named)})" in line for line in lines
    )
    assert any(line.startswith("a constant answer (") for line in lines)
    header = next(i for i, line in enumerate(lines) if line.startswith("server "))
    rows = [line.split() for line in lines[header + 1 :] if line.strip()]
    assert [r[0] for r in rows] == list(dict.fromkeys(m.server for m in records))
    assert sum(int(r[2]) for r in rows) == len(records)
