"""One probed process: bounded waits, exact id matching, a clean close."""

from __future__ import annotations

from probe_runs import HARNESS

from harness.probe import ProbeConfig, run_probe
from harness.probe.outcomes import NO_REPLY, NOT_RUN
from harness.probe.session import ProbeSession, _id_in
from harness.protocol.lifecycle import State

DEMO = (*HARNESS, "serve", "--demo")


def test_reply_ids_match_by_type_as_well_as_value() -> None:
    assert _id_in(1, (1, None))
    assert _id_in(None, (1, None))
    assert not _id_in(True, (1,))
    assert not _id_in("1", (1,))


def test_a_message_that_gets_no_answer_ends_in_no_reply_within_the_timeout() -> None:
    session = ProbeSession(DEMO, "2025-11-25", timeout=0.3, startup_timeout=30.0)
    try:
        assert session.advance(State.READY) is None
        reply = session.exchange(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', (99,))
        assert reply.failure is not None
        assert (reply.failure.label, reply.failure.detail) == (NO_REPLY, "nothing within 0.3s")
        assert session.alive  # silence is not death
        assert session.request("ping").message == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        session.close()
    assert session.transport.process.returncode is not None


def test_the_handshake_is_driven_only_forwards() -> None:
    session = ProbeSession(DEMO, "2025-06-18", timeout=5.0, startup_timeout=30.0)
    try:
        assert session.advance(State.INITIALIZING) is None
        assert (session.state, session.answered_version) == (State.INITIALIZING, "2025-06-18")
        assert session.advance(State.NEW) is None  # already past it: nothing to do
        assert session.advance(State.READY) is None
        assert session.state is State.READY
        assert session.server_info == {"name": "harness-demo", "version": "0.1.0"}
    finally:
        session.close()


def test_a_command_that_cannot_start_gives_rows_not_an_exception() -> None:
    report = run_probe(ProbeConfig(("/nonexistent/harness-probe-server",), timeout=1.0, startup_timeout=1.0))
    assert {row.observed for row in report.rules} == {NOT_RUN}
    assert report.rules[0].detail.startswith("cannot start '/nonexistent/harness-probe-server'")
