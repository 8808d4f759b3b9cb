"""The side-by-side Markdown table is built from probe JSON reports, never by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.probe import Report, RuleResult
from harness.probe.compare import main, markdown_table


def _report(name: str, rows: list[tuple[str, str, str, str]]) -> dict[str, object]:
    results = tuple(
        RuleResult(rule_id, "sent", "2025-11-25", "ref", "spec", observed, detail, verdict)
        for rule_id, observed, detail, verdict in rows
    )
    return Report(("srv",), 1.0, 1.0, {"name": name, "version": "1"}, results).to_json()


OURS = _report(
    "ours", [("a", "error -32600", "nope", "as reference & spec"), ("b", "echo", "x|y", "as spec")]
)
THEIRS = _report(
    "theirs", [("a", "no reply", "nothing within 1s", "no reply"), ("c", "result", "", "differs")]
)


def test_rows_are_the_union_in_first_seen_order_with_gaps_marked() -> None:
    table = markdown_table([OURS, THEIRS], ["ours", "theirs"]).splitlines()
    assert table[0] == "| rule | reference expects | spec expects | ours | theirs |"
    assert [line.split("|")[1].strip() for line in table[2:]] == ["`a`", "`b`", "`c`"]
    assert table[3].endswith("| echo · **as spec** | — |")
    assert table[4].endswith("| — | result · **differs** |")


def test_details_are_shown_on_request_with_pipes_escaped() -> None:
    plain = markdown_table([OURS], ["ours"])
    detailed = markdown_table([OURS], ["ours"], details=True)
    assert "x\\|y" not in plain
    assert "echo · **as spec**<br>`x\\|y`" in detailed


def test_the_command_reads_reports_and_names_columns_by_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for name, data in (("ours", OURS), ("theirs", THEIRS)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(str(path))
    main(paths)
    assert capsys.readouterr().out.splitlines()[0].endswith("| ours | theirs |")


def test_a_file_that_is_not_a_report_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"rules": []}', encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main([str(path)])
    assert exc.value.code == 2
    assert "is not a harness probe report" in capsys.readouterr().err


def test_only_keeps_the_rules_that_match() -> None:
    table = markdown_table([OURS, THEIRS], ["ours", "theirs"], only=["a", "c*"]).splitlines()
    assert [line.split("|")[1].strip() for line in table[2:]] == ["`a`", "`c`"]


def test_a_verdict_s_basis_is_shown_where_the_report_has_one() -> None:
    row = RuleResult("a", "sent", "2025-11-25", "ref", "spec", "result", "", "as spec", basis="spec")
    report = Report(("srv",), 1.0, 1.0, {"name": "x", "version": "1"}, (row,)).to_json()
    assert markdown_table([report], ["x"]).splitlines()[2].endswith("| result · **as spec** (spec) |")
