"""Issue 25, item 9: a verdict on argument validation needs evidence that the server read them.

``tests/peers/refused_server.py`` answers every call of its tool with ``isError`` "connection
refused", whatever the arguments (a server whose backend is missing). Before the fix its
``args.*@2025-11-25`` rows were "as spec" (and the 2025-06-18 ones "differs"): the reason rule
found words that are no generic "error", and took them for a validation. Now they are
"inconclusive", with the evidence field saying why. A server that names the argument
(``list_typed_server.py``, our demo) or whose valid call gets another answer
(``refused_server.py --validate``) is still judged.
"""

from __future__ import annotations

import io
import json
import subprocess

import pytest
from probe_runs import HARNESS, Probes, peer
from rich.console import Console

from harness.probe import VERDICTS, Report, render_table
from harness.probe.compare import markdown_table
from harness.probe.evidence import BLANK, blanked, compare_answers, read_evidence
from harness.probe.outcomes import (
    AS_BOTH,
    AS_SPEC,
    DIFFERS,
    INCONCLUSIVE,
    IS_ERROR_REASON,
    NO_REPLY,
    verdict,
)
from harness.probe.rules import RULES
from harness.probe.steps import argument_names, required_types, valid_arguments

pytestmark = pytest.mark.timeout(240)

ARGUMENT_RULES = [r.id for r in RULES if r.id.startswith("args.")]
CHROMIUM = "Chromium distribution 'chrome' is not found"


@pytest.fixture
def refused(probes: Probes) -> Report:
    return probes.get("refused")


def _error(text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": text}], "isError": True},
    }


class TestAServerThatNeverLooksAtTheArguments:
    @pytest.mark.parametrize("rule_id", ARGUMENT_RULES)
    def test_connection_refused_whatever_the_arguments_is_inconclusive(
        self, refused: Report, rule_id: str
    ) -> None:
        row = refused.row(rule_id)
        assert (row.observed, row.verdict) == (IS_ERROR_REASON, INCONCLUSIVE), row
        assert row.evidence == (
            "names neither an argument ('url', 'wait_ms') nor a type; "
            "a call with valid arguments got the same answer"
        )

    def test_a_missing_browser_is_no_validation_either(self, probes: Probes) -> None:
        report = probes.get("refused_chromium")
        assert {report.row(r).verdict for r in ARGUMENT_RULES} == {INCONCLUSIVE}
        assert CHROMIUM in report.row("args.missing@2025-11-25").detail

    def test_inconclusive_is_counted_in_the_summary_and_per_era(self, refused: Report) -> None:
        data = json.loads(json.dumps(refused.to_json()))
        assert data["summary"][INCONCLUSIVE] == len(ARGUMENT_RULES)
        assert data["summary_by_era"]["handshake"][INCONCLUSIVE] == len(ARGUMENT_RULES)
        assert list(data["summary"]) == list(VERDICTS)
        rows = {row["id"]: row for row in data["rules"]}
        assert rows["args.missing@2025-11-25"]["evidence"].startswith("names neither an argument")
        assert rows["method.ping"]["evidence"] is None

    def test_the_table_shows_the_verdict_and_why(self, refused: Report) -> None:
        out = io.StringIO()
        render_table(refused, Console(file=out, width=200, color_system=None))
        text = out.getvalue()
        assert f"{len(ARGUMENT_RULES)} inconclusive" in text
        assert "evidence: names neither an argument" in text

    def test_the_comparison_table_carries_the_verdict(self, refused: Report, probes: Probes) -> None:
        table = markdown_table([refused.to_json(), probes.get("list_typed").to_json()], ["refused", "typed"])
        line = next(ln for ln in table.splitlines() if ln.startswith("| `args.missing@2025-11-25`"))
        assert "isError with reason · **inconclusive** (spec)" in line
        assert "isError with reason · **as spec** (spec)" in line

    def test_the_cli_exits_0_for_an_inconclusive_server(self) -> None:
        done = subprocess.run(
            [*HARNESS, "probe", "--json", "--", *peer("refused_server")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        rows = {row["id"]: row for row in json.loads(done.stdout)["rules"]}
        assert {rows[r]["verdict"] for r in ARGUMENT_RULES} == {INCONCLUSIVE}


class TestServersThatDoLook:
    @pytest.mark.parametrize("rule_id", ["args.missing@2025-11-25", "args.wrong_type@2025-11-25"])
    def test_a_valid_call_that_gets_another_answer_is_evidence(self, probes: Probes, rule_id: str) -> None:
        # --validate: "invalid input" names nothing, but valid arguments get the refused connection.
        row = probes.get("refused_validate").row(rule_id)
        assert (row.observed, row.verdict) == (IS_ERROR_REASON, AS_SPEC)
        assert row.evidence is not None
        assert "a call with valid arguments got another answer: isError with reason: connect" in row.evidence

    def test_a_server_that_names_the_argument_is_as_spec(self, probes: Probes) -> None:
        for version in ("2025-06-18", "2025-11-25"):  # list_typed negotiates 2025-11-25 for both
            row = probes.get("list_typed").row(f"args.wrong_type@{version}")
            assert (row.verdict, row.evidence) == (AS_SPEC, "names the argument 'title'")

    def test_our_server_is_judged_as_before(self, probes: Probes) -> None:
        report = probes.get("is_error")
        assert report.row("args.missing@2025-06-18").verdict == AS_BOTH
        assert (
            report.row("args.missing@2025-06-18").evidence == "the code -32602 says the arguments are invalid"
        )
        assert report.row("args.wrong_type@2025-11-25").verdict == AS_SPEC
        assert report.row("args.wrong_type@2025-11-25").evidence == "names the argument 'city'"  # weather

    def test_only_the_argument_rules_carry_evidence(self, probes: Probes) -> None:
        for row in probes.get("is_error").rules:
            assert (row.evidence is not None) == row.id.startswith("args."), row.id


TOOL = {
    "name": "browse",
    "inputSchema": {
        "properties": {"url": {"type": "string"}, "wait_ms": {"type": "integer"}, "note": {}},
        "required": ["url", "wait_ms"],
    },
}


class TestReadingEvidence:
    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("1 validation error for call[browse]\nurl\n  Field required", "names the argument 'url'"),
            ("'wait_ms' is a required property", "names the argument 'wait_ms'"),
            ("Input should be a valid integer [type=int_parsing]", "names the type 'integer'"),
            ("Expected string, received number", "names the type 'string'"),
            ("12345 is not of type 'str'", "names the type 'str'"),
        ],
    )
    def test_words_that_name_an_argument_or_its_type_are_evidence(self, text: str, found: str) -> None:
        evidence = read_evidence(_error(text), argument_names(TOOL), required_types(TOOL))
        assert (evidence.conclusive, evidence.text) == (True, found)

    @pytest.mark.parametrize(
        "text",
        [
            "connect ECONNREFUSED 127.0.0.1:9222: connection refused",
            CHROMIUM,
            "urlopen error",  # a word that only contains an argument's name is not the name
            "internal failure",
        ],
    )
    def test_words_that_name_neither_are_not(self, text: str) -> None:
        evidence = read_evidence(_error(text), argument_names(TOOL), required_types(TOOL))
        assert not evidence.conclusive
        assert evidence.text == "names neither an argument ('url', 'wait_ms', 'note') nor a type"

    def test_the_code_for_invalid_params_and_a_success_are_evidence_of_their_own(self) -> None:
        refused = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "connection refused"}}
        assert read_evidence(refused, ["url"], ["string"]).conclusive
        collapsed = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "connection refused"}}
        assert not read_evidence(collapsed, ["url"], ["string"]).conclusive
        took = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
        assert (
            read_evidence(took, ["url"], ["string"]).text == "a success result: the server took the arguments"
        )

    def test_an_error_s_data_is_read_too(self) -> None:
        zod = {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32603, "message": "bad", "data": {"path": ["url"]}},
        }
        assert read_evidence(zod, ["url"], []).text == "names the argument 'url'"

    def test_the_valid_arguments_fit_the_schema(self) -> None:
        assert valid_arguments(TOOL) == {"url": "probe", "wait_ms": 1}
        assert required_types(TOOL) == ["string", "integer"]

    def test_the_values_sent_are_blanked_before_two_answers_are_compared(self) -> None:
        assert blanked("browse(url=12345) refused", [12345, "probe"]) == f"browse(url={BLANK}) refused"
        invalid, valid = _error("fetch 12345: connection refused"), _error("fetch probe: connection refused")
        sent = ({"url": 12345, "wait_ms": 1}, {"url": "probe", "wait_ms": 1})
        same = compare_answers(invalid, IS_ERROR_REASON, valid, IS_ERROR_REASON, sent)
        assert (same.conclusive, same.text) == (False, "a call with valid arguments got the same answer")
        other = compare_answers(
            invalid, IS_ERROR_REASON, {"id": 2, "result": {"content": []}}, "result", sent
        )
        assert other.conclusive and other.text.startswith(
            "a call with valid arguments got another answer: result"
        )

    def test_a_valid_call_that_got_no_answer_proves_nothing(self) -> None:
        found = compare_answers(_error("refused"), IS_ERROR_REASON, None, NO_REPLY, ({}, {}))
        assert not found.conclusive and "got no reply" in found.text


class TestTheVerdict:
    def test_an_answer_without_evidence_is_inconclusive_matched_or_not(self) -> None:
        rule = next(r for r in RULES if r.id == "args.missing@2025-11-25")
        assert verdict(IS_ERROR_REASON, rule.reference, rule.spec) == AS_SPEC
        assert verdict(IS_ERROR_REASON, rule.reference, rule.spec, conclusive=False) == INCONCLUSIVE
        assert verdict("error -32603", rule.reference, rule.spec) == DIFFERS
        assert verdict("error -32603", rule.reference, rule.spec, conclusive=False) == INCONCLUSIVE

    def test_a_failure_stays_its_own_verdict(self) -> None:
        rule = next(r for r in RULES if r.id == "args.missing@2025-11-25")
        assert verdict(NO_REPLY, rule.reference, rule.spec, conclusive=False) == "no reply"

    def test_inconclusive_is_listed_beside_the_others(self) -> None:
        assert VERDICTS.index(INCONCLUSIVE) == VERDICTS.index(DIFFERS) + 1
