"""Issue 20's probe defects, each against a small peer that reproduces it (``tests/peers/``).

Slow start and late replies (``held_server``, ``slow_server``), a server that exits at start while a
child keeps its output open (``orphan_server``), required arguments typed by a list or not at all
(``list_typed_server``), the argument rule judged by the negotiated version, and the basis of each
verdict (a request before ``initialize`` obliges only the client).
"""

from __future__ import annotations

import click
import pytest
from probe_runs import Probes, peer

from harness.cli.probe import command as probe_command
from harness.probe.outcomes import (
    AS_BOTH,
    AS_SPEC,
    BASIS_REFERENCE,
    BASIS_SPEC,
    DIED,
    EMPTY_RESULT,
    IS_ERROR_REASON,
    NO_REPLY,
    NOT_RUN,
    Expect,
    basis,
)
from harness.probe.rules import HANDSHAKE_ERA, RULES
from harness.probe.runner import DEFAULT_STARTUP_TIMEOUT
from harness.probe.session import ProbeSession, exchange_wait
from harness.probe.steps import bad_arguments, sample_value, schema_types, wrong_value
from harness.protocol.lifecycle import State

pytestmark = pytest.mark.timeout(240)


class TestSlowStart:
    def test_the_default_startup_wait_covers_a_server_that_takes_20_s(self) -> None:
        assert DEFAULT_STARTUP_TIMEOUT >= 20
        option = next(p for p in probe_command.params if p.name == "startup_timeout")
        assert isinstance(option, click.Option) and option.default == DEFAULT_STARTUP_TIMEOUT

    @pytest.mark.parametrize(
        ("now", "heard", "expected"),
        [
            (0.0, False, 30.0),  # the first exchange: the whole start-up wait
            (12.0, False, 18.0),  # a later one, still before the first line: what is left of it
            (29.0, False, 3.0),  # almost over: never less than the step timeout
            (12.0, True, 3.0),  # the server has spoken: the step timeout
        ],
    )
    def test_the_startup_wait_runs_from_the_start_until_the_first_line(
        self, now: float, heard: bool, expected: float
    ) -> None:
        assert exchange_wait(now, 0.0, heard, 3.0, 30.0) == expected

    def test_a_server_slow_to_start_is_answered_not_silent(self, probes: Probes) -> None:
        report = probes.get("slow")
        assert {row.observed for row in report.rules}.isdisjoint({NO_REPLY, NOT_RUN})
        assert report.row("tool.weather").observed == IS_ERROR_REASON

    def test_late_replies_are_matched_to_their_ids(self, probes: Probes) -> None:
        # held_server answers ping and tools/list only once initialize comes, after both timed out.
        report = probes.get("held")
        ping = report.row("handshake.ping_first")
        assert (ping.observed, ping.verdict) == (EMPTY_RESULT, AS_SPEC)
        assert ping.detail.startswith("late, after the 10s wait")
        before = report.row("handshake.before_initialize")
        assert (before.observed, before.verdict) == ("error -32600", AS_BOTH)
        assert before.detail.startswith("late, after the 1s wait: server not initialized")

    def test_a_late_initialize_answer_still_completes_the_handshake(self) -> None:
        # The answer comes 6 s after the server starts: after the 4 s wait, within the 4 s more the
        # probe gives (2 s of margin either side for a loaded machine's slow interpreter start).
        command = (*peer("late_init_server"), "6.0")
        session = ProbeSession(command, "2025-11-25", timeout=4.0, startup_timeout=0.1)
        try:
            assert session.advance(State.READY) is None
            assert (session.state, session.answered_version) == (State.READY, "2025-11-25")
            assert list(session.late) == [1]
            assert session.request("ping").message == {"jsonrpc": "2.0", "id": 2, "result": {}}
        finally:
            session.close()

    def test_a_late_first_reply_does_not_turn_the_rest_into_not_run(self, probes: Probes) -> None:
        rows = [row for row in probes.get("held").rules if row.era == HANDSHAKE_ERA]
        assert [row.id for row in rows if row.observed in (NOT_RUN, NO_REPLY)] == []
        assert probes.get("held").row("tool.weather").observed == IS_ERROR_REASON


class TestExitAtStart:
    def test_an_exit_is_noticed_though_a_child_keeps_the_output_open(self, probes: Probes) -> None:
        # Step timeouts of 30 s: a "no reply" would mean the exit went unnoticed.
        report = probes.get("orphan")
        assert {row.observed for row in report.rules} == {DIED, NOT_RUN}
        died = report.row("handshake.ping_first").detail
        assert died == "exited with code 3: orphan_server: refusing to serve"
        # It died before writing a line: restarting it for every rule would only repeat that.
        assert report.row("tool.weather").detail == (
            "not restarted, it died at start: exited with code 3: orphan_server: refusing to serve"
        )


class TestArgumentTypes:
    @pytest.mark.parametrize(
        ("prop", "types"),
        [
            ({"type": "integer"}, ("integer",)),
            ({"type": ["string", "null"]}, ("string", "null")),
            ({"anyOf": [{"type": "string"}, {"type": "number"}]}, ("string", "number")),
            ({"oneOf": [{"type": "string"}, {"description": "anything"}]}, None),
            ({"description": "anything"}, None),
            ({}, None),
        ],
    )
    def test_schema_types_read_a_name_a_list_or_branches(self, prop: object, types: object) -> None:
        assert schema_types(prop) == types

    @pytest.mark.parametrize(
        ("prop", "wrong"),
        [
            ({"type": "string"}, 12345),
            ({"type": "integer"}, "not-a-number"),
            ({"type": "boolean"}, "not-a-boolean"),
            ({"type": ["string", "null"]}, 12345),
            ({"type": ["integer", "string"]}, ["not", "a", "scalar"]),
            ({"anyOf": [{"type": "number"}, {"type": "boolean"}]}, "not-a-number"),
            ({"description": "anything"}, None),
        ],
    )
    def test_a_wrong_value_is_wrong_for_every_type_listed(self, prop: object, wrong: object) -> None:
        assert wrong_value(prop) == wrong

    @pytest.mark.parametrize(
        ("prop", "sample"),
        [
            ({"type": ["null", "integer"]}, 1),
            ({"type": "null"}, None),
            ({"enum": ["a", "b"]}, "a"),
            ({"const": 7}, 7),
            ({"description": "anything"}, "probe"),
        ],
    )
    def test_a_sample_value_fits_the_schema(self, prop: object, sample: object) -> None:
        assert sample_value(prop) == sample

    def test_every_required_argument_is_sent_and_only_one_is_mistyped(self) -> None:
        tool = {
            "name": "note",
            "inputSchema": {
                "properties": {"title": {"type": ["string", "null"]}, "count": {"type": "integer"}},
                "required": ["title", "body", "count"],
            },
        }
        assert bad_arguments(tool, "wrong_type") == {"title": 12345, "body": "probe", "count": 1}
        assert bad_arguments(tool, "missing") == {}

    def test_the_server_s_answer_names_the_mistyped_argument_only(self, probes: Probes) -> None:
        for version in ("2025-06-18", "2025-11-25"):
            row = probes.get("list_typed").row(f"args.wrong_type@{version}")
            assert row.observed == IS_ERROR_REASON
            assert "wrong type for argument(s): title" in row.detail
            assert "missing" not in row.detail


class TestNegotiatedVersion:
    def test_the_argument_rule_follows_the_version_the_server_negotiated(self, probes: Probes) -> None:
        # list_typed_server answers 2025-11-25 to a session that asked for 2025-06-18.
        row = probes.get("list_typed").row("args.missing@2025-06-18")
        assert (row.negotiated, row.observed, row.verdict) == ("2025-11-25", IS_ERROR_REASON, AS_SPEC)
        assert "judged under 2025-11-25" in row.spec

    def test_a_server_that_echoes_the_version_is_judged_by_it(self, probes: Probes) -> None:
        row = probes.get("is_error").row("args.missing@2025-06-18")
        assert (row.negotiated, row.observed, row.verdict) == (None, "error -32602", AS_BOTH)

    def test_the_rule_table_names_the_change_at_sep_1303(self) -> None:
        rule = next(r for r in RULES if r.id == "args.wrong_type@2025-06-18")
        before, after = rule.spec_for("2025-06-18"), rule.spec_for("2025-11-25")
        assert before is not None and before.accepts == ("error -32602",)
        assert after is not None and after.accepts == (IS_ERROR_REASON,)
        assert rule.spec_for("1999-01-01") is rule.spec  # a version we do not know: as asked


REQUIRED = Expect("error -32600", ("error -32600",))
OPEN = Expect("left open", ("result", "error *"), required=False)
REF = Expect("error -32600", ("error -32600",))


class TestBasis:
    @pytest.mark.parametrize(
        ("verdict_", "reference", "spec", "expected"),
        [
            ("as reference & spec", REF, REQUIRED, BASIS_SPEC),
            ("as reference & spec", REF, OPEN, BASIS_REFERENCE),
            ("as reference", REF, REQUIRED, BASIS_REFERENCE),
            ("as spec", REF, OPEN, BASIS_SPEC),
            ("differs", REF, REQUIRED, BASIS_SPEC),
            ("differs", REF, OPEN, BASIS_REFERENCE),
            ("differs", REF, None, BASIS_REFERENCE),
            ("differs", None, REQUIRED, BASIS_SPEC),
            ("no reply", REF, OPEN, BASIS_REFERENCE),
        ],
    )
    def test_a_verdict_rests_on_the_spec_only_where_the_spec_requires(
        self, verdict_: str, reference: Expect | None, spec: Expect | None, expected: str
    ) -> None:
        assert basis(verdict_, reference, spec) == expected

    def test_a_request_before_initialize_obliges_only_the_client(self) -> None:
        rule = next(r for r in RULES if r.id == "handshake.before_initialize")
        assert rule.spec is not None and not rule.spec.required
        assert rule.spec.matches("result") and rule.spec.matches("error -32602")

    def test_a_server_that_answers_before_initialize_meets_the_spec(self, probes: Probes) -> None:
        # As the TypeScript reference servers do; the reference's gate is ours, not the spec's.
        row = probes.get("list_typed").row("handshake.before_initialize")
        assert (row.observed, row.verdict, row.basis) == ("result", AS_SPEC, BASIS_SPEC)

    def test_our_gate_is_the_reference_s_rule_not_a_spec_requirement(self, probes: Probes) -> None:
        row = probes.get("is_error").row("handshake.before_initialize")
        assert (row.observed, row.verdict, row.basis) == ("error -32600", AS_BOTH, BASIS_REFERENCE)
        assert probes.get("is_error").row("envelope.id_null").basis == BASIS_SPEC
