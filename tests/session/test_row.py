"""The session row: one module defines its columns, their order, types and meanings."""

from __future__ import annotations

import copy
import math
import pickle
import re
from dataclasses import FrozenInstanceError, fields, replace

import pytest

from harness.batch.grid import KEY_COLUMNS as GRID_KEY_COLUMNS
from harness.faults.kinds import FAULT_KIND_TABLE, FAULT_KINDS
from harness.session.row import (
    COLUMNS,
    KEY_COLUMNS,
    ROW_COLUMNS,
    RPC_CODES,
    SessionResult,
    summary_row,
)
from harness.session.simulated import ROW_COLUMNS as SESSION_ROW_COLUMNS
from harness.session.simulated import SessionResult as SessionSessionResult
from harness.session.simulated import run_session

ORDER = (
    "scenario", "agent", "strategy", "host", "codec", "seed", "status", "end", "success",
    "subgoals_done", "subgoals_total", "steps", "tool_calls",
    "faults_transient", "faults_rate_limited", "faults_permanent", "faults_bad_argument",
    "faults_too_large", "faults_timeout", "faults_malformed", "faults_silent",
    "faults_explicit", "faults_implicit", "errors_is_error",
    "errors_rpc_32700", "errors_rpc_32600", "errors_rpc_32601", "errors_rpc_32602", "errors_rpc_32603",
    "errors_rpc_other", "errors_transport", "recoveries", "recovery_opportunities", "recover_steps",
    "steps_to_recover_mean", "repeated_failing_calls", "give_ups", "correct_give_ups",
    "stale_tool_calls", "list_changed_seen", "virtual_time_s", "wall_time_s", "trace_hash",
    "fault_schedule_hash", "error",
)  # fmt: skip
"""The columns of sessions.parquet as every run before the end-state outcomes wrote them: the
order is part of the results."""

APPENDED = (
    "correct", "corrupted", "duplicated_writes", "gave_up", "baseline_success",
    "time_to_recover_steps", "recover_censored",
)  # fmt: skip
"""The outcome columns added since (issue 17), at the end so that the others keep their places."""

APPENDED_18 = (
    "faults_futile_outage", "faults_post_commit", "faults_silent_noop", "faults_stale",
    "faults_wrong_units", "faults_partial", "faults_schema_drift",
)  # fmt: skip
"""The columns of the fault kinds of issue 18, at the end likewise."""

APPENDED_21 = ("tokens_in", "tokens_out", "model_latency_s")
"""A model's cost (issue 21): 0 for the scripted agents."""
APPENDED_19 = ("era", "input_requests", "inputs_accepted")
"""The protocol era and the questions a server asked inside calls (issue 19)."""
APPENDED_26 = ("sources_met", "claimed", "misreported", "order_violations", "answers_wrong", "messages_seen",
               "messages_read", "harmful_calls", "misled")  # fmt: skip
"""Where fault texts came from, what the agent told the user and read, and the harm text did
(issues 26 and 27)."""
APPENDED_31 = ("baseline_tokens_in", "baseline_tokens_out")
"""What the fault-free baseline's model requests cost, charged once per baseline (issue 31)."""
APPENDED_28 = ("server",)
"""The real server a session ran against (``harness run --server``; issue 28)."""
APPENDED_40 = ("judge",)
"""Who decided success: the harness, or a world's own check (issue 40)."""
APPENDED_41 = ("injection", "security_breached")
"""Issue 41 (row version 10): a world's injection task, and its own security verdict."""
APPENDED_46 = ("max_steps",)
"""Issue 46 (row version 11): the session's step budget, where a failure counts in a restricted mean."""
APPENDED_49 = ("processes_ended",)
"""Issue 49 (row version 12): the processes a session left running, which the harness ended."""


def test_the_column_order_is_the_one_results_were_written_in() -> None:
    appended = APPENDED + APPENDED_18 + APPENDED_21 + APPENDED_19 + APPENDED_26 + APPENDED_31 + APPENDED_28
    appended += APPENDED_40 + APPENDED_41 + APPENDED_46 + APPENDED_49
    assert ORDER + appended == ROW_COLUMNS
    assert SESSION_ROW_COLUMNS is ROW_COLUMNS and SessionSessionResult is SessionResult


def test_every_column_has_a_plain_type_and_a_one_line_meaning() -> None:
    for column in COLUMNS:
        assert column.type in (str, int, bool, float, list[int]), column
        assert column.meaning and "\n" not in column.meaning, column


def test_one_faults_column_per_row_of_the_fault_table_and_one_rpc_column_per_code() -> None:
    faults = [c.name for c in COLUMNS if c.name.startswith("faults_") and c.name[7:] in FAULT_KIND_TABLE]
    assert faults == [f"faults_{k}" for k in FAULT_KINDS]
    rpc = [c.name for c in COLUMNS if c.name.startswith("errors_rpc_") and c.name != "errors_rpc_other"]
    assert rpc == [f"errors_rpc_{-code}" for code in RPC_CODES]


def test_key_columns_live_with_the_row_and_are_still_importable_from_the_grid() -> None:
    assert GRID_KEY_COLUMNS is KEY_COLUMNS
    assert set(KEY_COLUMNS) <= set(ROW_COLUMNS)


@pytest.fixture(scope="module")
def result() -> SessionResult:
    return run_session("travel_day", "reader", "is_error", 3)


def test_a_row_holds_values_of_the_column_types(result: SessionResult) -> None:
    row = result.to_row()
    assert list(row) == list(ROW_COLUMNS)
    for column in COLUMNS:
        expected = list if column.type == list[int] else column.type
        assert isinstance(row[column.name], expected), column
    assert "wall_time_s" not in summary_row(result)


def test_derived_columns_read_as_attributes(result: SessionResult) -> None:
    for kind in FAULT_KINDS:
        assert getattr(result, f"faults_{kind}") == result.faults[kind]
    for code in RPC_CODES:
        assert getattr(result, f"errors_rpc_{-code}") == result.errors_rpc[code]
    with pytest.raises(AttributeError, match="faults_flaky"):
        _ = result.faults_flaky
    with pytest.raises(AttributeError, match="nonsense"):
        _ = result.nonsense


def test_a_record_survives_pickle_and_copy(result: SessionResult) -> None:
    for twin in (pickle.loads(pickle.dumps(result)), copy.copy(result), copy.deepcopy(result)):
        a, b = twin.to_row(), result.to_row()
        assert a.keys() == b.keys()
        assert all(a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k])) for k in a)


def test_counts_must_cover_exactly_the_kinds_and_codes(result: SessionResult) -> None:
    with pytest.raises(ValueError, match="faults"):
        replace(result, faults={k: 0 for k in FAULT_KINDS[:-1]})
    with pytest.raises(ValueError, match="errors_rpc"):
        replace(result, errors_rpc={**result.errors_rpc, -1: 0})


def _fields_of(result: SessionResult, *leave_out: str) -> dict[str, object]:
    return {f.name: getattr(result, f.name) for f in fields(SessionResult) if f.name not in leave_out}


@pytest.mark.parametrize("leave_out", [(), ("server", "baseline_tokens_in")], ids=["every-field", "defaults"])
def test_of_builds_what_the_constructor_builds(result: SessionResult, leave_out: tuple[str, ...]) -> None:
    given = _fields_of(result, *leave_out)
    fast, plain = SessionResult.of(**given), SessionResult(**given)
    assert fast == plain and repr(fast) == repr(plain)
    assert list(vars(fast).items()) == list(vars(plain).items())  # same fields, same order
    assert fast.to_row().keys() == plain.to_row().keys()
    with pytest.raises(FrozenInstanceError):
        fast.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    "change",
    [{"nonsense": 1}, {"faults": {k: 0 for k in FAULT_KINDS[:-1]}}, {"errors_rpc": {-1: 0}}],
    ids=["unknown-field", "fault-keys", "rpc-keys"],
)
def test_of_refuses_what_the_constructor_refuses(result: SessionResult, change: dict[str, object]) -> None:
    given = {**_fields_of(result), **change}
    with pytest.raises((TypeError, ValueError)) as plain:
        SessionResult(**given)
    with pytest.raises(plain.type, match=re.escape(str(plain.value).split(":")[0])):
        SessionResult.of(**given)
    with pytest.raises(TypeError):
        SessionResult.of(**_fields_of(result, "seed"))  # a required field missing
