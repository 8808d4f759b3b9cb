"""Each agent's policy on each kind of observation, one step at a time, without a session."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.errors import UserError
from harness.protocol.server import TOOLS_LIST_CHANGED
from harness.reading import Reading
from harness.scenarios.scenario import Option, Subgoal, Task
from harness.session.agent import (
    Action,
    CallTool,
    Finish,
    GiveUp,
    ListTools,
    Observation,
    RPCErrorObservation,
    Start,
    ToolResult,
    ToolsListed,
    Wait,
)
from harness.sim.catalogue import CATALOGUE
from scripted_agents import AGENTS, Agent, list_agents, make
from scripted_agents.base import looks_ok, remap


def _listed(name: str, read_only: bool | None = None) -> dict[str, Any]:
    spec = CATALOGUE[name]
    hint = spec.read_only if read_only is None else read_only
    return {"name": name, "inputSchema": spec.schema, "annotations": {"readOnlyHint": hint}}


def descriptor(name: str, variant: str | None = None) -> dict[str, Any]:
    spec = CATALOGUE[name]
    return {"name": name, "inputSchema": spec.schema_for(variant), "annotations": spec.annotations}


TOOLS = [descriptor(n) for n in ("query_db", "query_replica", "book", "list_bookings")]
PRIMARY = CallTool("query_db", {"table": "Orders", "limit": 50})
ALTERNATIVE = CallTool("query_replica", {"table": "Orders", "limit": 50})
READ = Subgoal(
    "rows", (Option(PRIMARY.tool, PRIMARY.arguments), Option(ALTERNATIVE.tool, ALTERNATIVE.arguments))
)
WRITE = Subgoal(
    "booking", (Option("book", {"item": "room", "date": "2025-06-01"}),), verify=Option("list_bookings", {})
)


def started(name: str, *subgoals: Subgoal, seed: int = 0) -> tuple[Agent, Action]:
    agent = make(name)
    agent.reset(Task("test", subgoals or (READ,)), TOOLS, seed)
    return agent, agent.act(Start())


def result(
    text: str, *, error: bool = False, tool: str = "query_db", notes: tuple[str, ...] = ()
) -> ToolResult:
    return ToolResult(tool, {}, ({"type": "text", "text": text},), error, notifications=notes)


OK = result(json.dumps({"table": "orders", "rows": []}))
GARBLED = result('{"table": "ord')
BINARY = ToolResult("query_db", {}, ({"type": "resource", "resource": {"uri": "x", "blob": "AAAA"}},), False)
TRANSIENT = result("ERROR: temporary failure in query_db: upstream returned 503; try again", error=True)
RATE = result("ERROR: rate limited: too many requests to query_db; retry after 5 s", error=True)
PERMANENT = result("ERROR: query_db is permanently unavailable: its upstream service was retired", error=True)
BAD_ARG = result(
    "ERROR: invalid argument 'table': 'Orders' is not accepted; expected form 'orders'", error=True
)
TOO_LARGE = result(
    "ERROR: result too large for one response; narrow the request: set 'limit' to at most 10", error=True
)
TIMEOUT = result("ERROR: query_db timed out after 30 s without an answer", error=True)
MASKED = result("Error executing tool query_db", error=True)
IMPLICIT = result("ERROR: request failed", error=True)
RPC_HIDDEN = RPCErrorObservation("query_db", {}, -32603, None)
RPC_SHOWN = RPCErrorObservation("query_db", {}, -32603, "rate limited: too many requests; retry after 5 s")
GONE = RPCErrorObservation("query_db", {}, -32601, None)
FORBIDDEN = RPCErrorObservation("query_db", {}, -32600, None)

SAME = PRIMARY
FIXED = CallTool("query_db", {"table": "orders", "limit": 50})
NARROWED = CallTool("query_db", {"table": "Orders", "limit": 10})
GUESS = "guess"  # a seeded blind move: the same call again, maybe after a short wait

POLICY: dict[str, dict[str, Any]] = {
    # observation -> expected first action per agent
    "ok": {"naive": Finish(), "retry": Finish(), "reader": Finish(), "refresher": Finish()},
    "garbled": {"naive": Finish(), "retry": Finish(), "reader": SAME, "refresher": SAME},
    "binary": {"naive": Finish(), "retry": Finish(), "reader": SAME, "refresher": SAME},
    "transient": {"naive": GiveUp, "retry": SAME, "reader": SAME, "refresher": SAME},
    "timeout": {"naive": GiveUp, "retry": SAME, "reader": SAME, "refresher": SAME},
    "rate": {"naive": GiveUp, "retry": SAME, "reader": Wait(5.0), "refresher": Wait(5.0)},
    "permanent": {"naive": GiveUp, "retry": SAME, "reader": ALTERNATIVE, "refresher": ALTERNATIVE},
    "bad_arg": {"naive": GiveUp, "retry": SAME, "reader": FIXED, "refresher": FIXED},
    "too_large": {"naive": GiveUp, "retry": SAME, "reader": NARROWED, "refresher": NARROWED},
    "masked": {"naive": GiveUp, "retry": SAME, "reader": GUESS, "refresher": GUESS},
    "implicit": {"naive": GiveUp, "retry": SAME, "reader": GUESS, "refresher": GUESS},
    "rpc_hidden": {"naive": GiveUp, "retry": SAME, "reader": GUESS, "refresher": GUESS},
    "rpc_shown": {"naive": GiveUp, "retry": SAME, "reader": Wait(5.0), "refresher": Wait(5.0)},
    "gone": {"naive": GiveUp, "retry": SAME, "reader": ALTERNATIVE, "refresher": ListTools()},
    "forbidden": {"naive": GiveUp, "retry": SAME, "reader": ALTERNATIVE, "refresher": ListTools()},
}
OBSERVATIONS: dict[str, Observation] = {
    "ok": OK, "garbled": GARBLED, "binary": BINARY, "transient": TRANSIENT, "timeout": TIMEOUT, "rate": RATE,
    "permanent": PERMANENT, "bad_arg": BAD_ARG, "too_large": TOO_LARGE, "masked": MASKED,
    "implicit": IMPLICIT,
    "rpc_hidden": RPC_HIDDEN, "rpc_shown": RPC_SHOWN, "gone": GONE, "forbidden": FORBIDDEN,
}  # fmt: skip
CASES = [(obs, agent, want) for obs, row in POLICY.items() for agent, want in row.items()]


@pytest.mark.parametrize(("obs", "agent", "want"), CASES, ids=[f"{a}-{o}" for o, a, _ in CASES])
def test_each_agent_answers_each_observation_by_its_policy(obs: str, agent: str, want: Any) -> None:
    ag, first = started(agent)
    assert first == PRIMARY
    action = ag.act(OBSERVATIONS[obs])
    if want is GiveUp:
        assert isinstance(action, GiveUp)
    elif want == GUESS:
        assert action == SAME or (isinstance(action, Wait) and action.seconds in (1.0, 2.0))
    elif isinstance(want, Finish):
        assert isinstance(action, Finish)  # with whatever it read as its answer (test_answers_*)
    else:
        assert action == want


@pytest.mark.parametrize("agent", ["reader", "refresher"])
def test_a_guessing_agent_is_deterministic_per_seed_and_switches_when_guesses_run_out(agent: str) -> None:
    def moves(seed: int) -> list[Action]:
        ag, _ = started(agent, seed=seed)
        out: list[Action] = []
        obs: Observation = MASKED
        for _ in range(6):
            action = ag.act(obs)
            out.append(action)
            if isinstance(action, CallTool) and action.tool == "query_replica":
                break
            obs = MASKED if isinstance(action, CallTool) else result("", error=True)
            if isinstance(action, Wait):
                from harness.session.agent import Waited

                obs = Waited(action.seconds, 0.0)
        return out

    for seed in range(5):
        assert moves(seed) == moves(seed)
        assert moves(seed)[-1] == ALTERNATIVE
    assert len({tuple(map(repr, moves(s))) for s in range(12)}) > 1  # the seed matters


def test_retry_gives_up_after_k_retries_of_the_identical_call() -> None:
    ag, first = started("retry")
    actions = [ag.act(TRANSIENT) for _ in range(4)]
    assert actions[:3] == [first] * 3
    assert isinstance(actions[3], GiveUp)


def test_a_reader_whose_fix_did_not_help_guesses_and_then_switches() -> None:
    from harness.session.agent import Waited

    ag, _ = started("reader", seed=0)
    assert ag.act(BAD_ARG) == FIXED
    actions = []
    obs: Observation = BAD_ARG
    for _ in range(6):
        action = ag.act(obs)
        actions.append(action)
        if isinstance(action, CallTool) and action.tool == "query_replica":
            break
        obs = Waited(action.seconds, 0.0) if isinstance(action, Wait) else BAD_ARG
    assert all(a == FIXED or isinstance(a, Wait) for a in actions[:-1])
    assert actions[-1] == ALTERNATIVE


@pytest.mark.parametrize("agent", ["reader", "refresher"])
def test_a_verifying_agent_reads_back_a_write_and_redoes_it_if_it_did_not_happen(agent: str) -> None:
    ag, first = started(agent, WRITE)
    assert first == CallTool("book", {"item": "room", "date": "2025-06-01"})
    booked = result(
        json.dumps({"booked": True, "ref": "B-0001", "item": "room", "date": "2025-06-01"}), tool="book"
    )
    assert ag.act(booked) == CallTool("list_bookings", {})
    assert ag.act(result(json.dumps({"bookings": []}), tool="list_bookings")) == first
    assert ag.act(booked) == CallTool("list_bookings", {})
    record = {"bookings": [{"ref": "B-0001", "item": "room", "date": "2025-06-01"}]}
    assert isinstance(ag.act(result(json.dumps(record), tool="list_bookings")), Finish)


@pytest.mark.parametrize("agent", ["naive", "retry"])
def test_a_trusting_agent_never_verifies(agent: str) -> None:
    ag, _ = started(agent, WRITE)
    assert isinstance(ag.act(result(json.dumps({"booked": True}), tool="book")), Finish)


def test_a_notification_makes_the_refresher_re_list_and_then_carry_on_with_refitted_arguments() -> None:
    second = Subgoal("more", (Option("query_db", {"table": "customers"}),))
    ag, _ = started("refresher", READ, second)
    assert ag.act(result(OK.text, notes=(TOOLS_LIST_CHANGED,))) == ListTools()
    v2 = [descriptor("query_db", "v2"), *TOOLS[1:]]
    assert ag.act(ToolsListed(tuple(v2))) == CallTool("query_db", {"source": "customers"})


def test_a_notification_changes_nothing_for_the_reader() -> None:
    second = Subgoal("more", (Option("query_db", {"table": "customers"}),))
    ag, _ = started("reader", READ, second)
    assert ag.act(result(OK.text, notes=(TOOLS_LIST_CHANGED,))) == CallTool(
        "query_db", {"table": "customers"}
    )


def test_a_schema_error_makes_the_refresher_re_list_and_the_reader_guess() -> None:
    schema_error = result(
        "ERROR: invalid arguments for tool 'query_db': missing required argument 'source'", error=True
    )
    refresher, _ = started("refresher")
    assert refresher.act(schema_error) == ListTools()
    v2 = [descriptor("query_db", "v2"), *TOOLS[1:]]
    assert refresher.act(ToolsListed(tuple(v2))) == CallTool("query_db", {"source": "Orders", "limit": 50})
    reader, _ = started("reader")
    action = reader.act(schema_error)
    assert action == SAME or isinstance(action, Wait)


def test_a_refresher_adopts_a_tool_that_appeared_after_its_only_option_died() -> None:
    only = Subgoal("w", (Option("weather", {"city": "Oslo"}), Option("forecast", {"location": "Oslo"})))
    ag = make("refresher")
    ag.reset(Task("t", (only,)), [descriptor("weather")], 0)
    assert ag.act(Start()) == CallTool("weather", {"city": "Oslo"})
    dead = result("ERROR: weather is permanently unavailable", error=True, tool="weather")
    assert ag.act(dead) == ListTools()
    listed = ToolsListed((descriptor("weather"), descriptor("forecast")))
    assert ag.act(listed) == CallTool("forecast", {"location": "Oslo"})
    reader = make("reader")
    reader.reset(Task("t", (only,)), [descriptor("weather")], 0)
    reader.act(Start())
    assert isinstance(reader.act(dead), GiveUp)


def test_the_oracle_refuses_to_act_unbound() -> None:
    ag = make("oracle")
    ag.reset(Task("t", (READ,)), TOOLS, 0)
    with pytest.raises(RuntimeError, match="bound"):
        ag.act(Start())


@pytest.mark.parametrize(
    ("reading", "then"),
    [
        (Reading("transient", None, None, None, True, None), "the same call"),
        (Reading("timeout", None, None, None, True, None), "the same call"),
        (Reading("rate_limited", None, None, 7.0, True, None), "wait 7"),
        (Reading("bad_argument", "date", "^\\d{4}-\\d{2}-\\d{2}$", None, True, None), "date fixed"),
        (Reading("permanent", None, None, None, True, None), "another tool"),
        (Reading("not_found", None, None, None, True, None), "another tool"),
        (Reading("unknown", None, None, None, False, None), "a guess"),
    ],
)
def test_a_reader_acts_on_what_a_reading_says(reading: Reading, then: str) -> None:
    """The scripted reader's policy, fed readings directly: what it does with each category."""
    ag = make("reader")
    task = Task(
        "t",
        (
            Subgoal(
                "b",
                (
                    Option("book", {"item": "x", "date": "14/3/2025"}),
                    Option("write_note", {"title": "x", "text": "y"}),
                ),
            ),
        ),
    )
    ag.reset(task, [_listed(t) for t in ("book", "write_note")], 0)
    ag.act(Start())
    action = ag.respond(reading)
    if then == "the same call":
        assert action == CallTool("book", {"item": "x", "date": "14/3/2025"})
    elif then == "wait 7":
        assert action == Wait(7.0)
    elif then == "date fixed":
        assert action == CallTool("book", {"item": "x", "date": "2025-03-14"})
    elif then == "another tool":
        assert isinstance(action, CallTool) and action.tool == "write_note"
    else:
        assert action == CallTool("book", {"item": "x", "date": "14/3/2025"}) or isinstance(action, Wait)
    assert ag.session_metrics()["messages_read"] == (0 if then == "a guess" else 1)


def test_an_instruction_in_error_text_is_followed_by_trust() -> None:
    """follow: the instructed tool is called, then the failed call again; verify: only a read-only
    tool; ignore: never (the text is not read at all)."""
    from harness.reading import Instruction

    order = Reading("unknown", None, None, None, False, Instruction("delete_bookings", {}))
    task = Task("t", (Subgoal("b", (Option("book", {"item": "x", "date": "2025-03-14"}),)),))
    tools = [_listed("book"), _listed("delete_bookings", read_only=False)]
    for trust, follows in (("follow", True), ("verify", False), ("ignore", False)):
        ag = make("reader")
        ag.configure({"trust": trust})
        ag.reset(task, tools, 0)
        first = ag.act(Start())
        action = ag.respond(order)
        assert (action == CallTool("delete_bookings", {})) is follows, trust
        if follows:
            assert ag.act(result('{"deleted": 0}', tool="delete_bookings")) == first


def test_remap_moves_a_lost_argument_to_the_one_the_schema_gained() -> None:
    schema = CATALOGUE["weather"].schema_for("v2")
    assert remap({"city": "Oslo"}, schema) == {"location": "Oslo"}
    assert remap({"location": "Oslo"}, schema) == {"location": "Oslo"}


def test_the_registry_has_the_six_agents_and_make_rejects_unknown_names() -> None:
    assert list_agents() == ["blind", "naive", "oracle", "reader", "refresher", "retry"]
    assert all(isinstance(make(n), AGENTS[n]) for n in list_agents())
    with pytest.raises(UserError, match="unknown agent 'reeder'; did you mean 'reader'"):
        make("reeder")


def test_a_plain_text_answer_is_whole_and_a_cut_json_one_is_garbled() -> None:
    from scripted_agents.base import looks_ok

    assert looks_ok(result("Successfully wrote to note.txt"))  # as a real server answers a write
    assert looks_ok(result('{"rows": []}'))
    assert not looks_ok(result('{"rows": ['))
    assert not looks_ok(result("[malformed upstream response] {"))
    assert not looks_ok(result(""))


def test_a_result_printed_as_a_python_dict_is_whole_and_one_cut_short_is_not() -> None:
    # AgentDojo's tools answer a dict as str() prints it; a truncated one still does not parse.
    def text(value: str) -> ToolResult:
        return ToolResult("send_money", {}, ({"type": "text", "text": value},), False)

    assert looks_ok(text("{'message': 'Transaction to UK12 for 98.7 sent.'}"))
    assert not looks_ok(text("{'message': 'Transaction to UK12 for 98.7"))
    assert not looks_ok(text('{"city": "Oslo", "temp'))


@pytest.mark.parametrize("name", sorted(a for a in AGENTS if a != "oracle"))  # it plans: tests/worlds
def test_an_agent_that_got_every_planned_call_answered_reports_the_plan_output_in_words(name: str) -> None:
    agent = make(name)
    agent.reset(Task("test", (READ,), plan_output="The total is 98.70."), TOOLS, 0)
    call = agent.act(Start())
    assert isinstance(call, CallTool)
    done = agent.act(result('{"rows": []}', tool=call.tool))
    assert isinstance(done, Finish)
    assert done.text == "The total is 98.70."


def test_an_agent_with_no_plan_output_reports_no_words() -> None:
    agent, call = started("reader")
    assert isinstance(call, CallTool)
    done = agent.act(result('{"rows": []}', tool=call.tool))
    assert isinstance(done, Finish) and done.text == ""
