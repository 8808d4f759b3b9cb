"""The proxy's decisions without processes: a ProxyCore between the test and the demo lab in memory.

Each class is one rule of ``harness/proxy/core.py``'s docstring. The upstream is the demo lab
(``weather("Atlantis")`` raises; ``book`` asks for a city), whose real isError the strategies
rewrite; time is a number the test moves.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.proxy_pair import ProxyPair

from harness.fixtures.demo import build_demo_server
from harness.protocol.server import MCPServer
from harness.protocol.stateless import SUBSCRIPTION_ID
from harness.protocol.strategies import STRATEGIES
from harness.proxy import parse_plan
from harness.proxy.plan import Plan

STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def plan(faults: list[dict[str, Any]] | None = None, events: list[dict[str, Any]] | None = None) -> Plan:
    return parse_plan({"faults": faults or [], "events": events or []}, shown="f.toml")


def demo(**core: Any) -> ProxyPair:
    pair = ProxyPair(build_demo_server(elicit=True), **core)
    pair.handshake({"elicitation": {}})
    return pair


def text(reply: dict[str, Any]) -> str:
    return str(reply["result"]["content"][0]["text"])


class TestPassThrough:
    def test_requests_and_replies_cross_untouched_ids_and_meta_included(self) -> None:
        pair = demo()
        message = {
            "jsonrpc": "2.0",
            "id": "abc",
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"x": 2, "y": 3}, "_meta": {"progressToken": 7}},
        }
        got = pair.send(message)
        assert pair.upstream_got[-1] == message
        assert got == [
            {"jsonrpc": "2.0", "id": "abc", "result": {"content": [{"type": "text", "text": "5"}]}}
        ]

    def test_a_server_request_and_its_answer_pass_both_ways(self) -> None:
        pair = demo()
        asked = {"jsonrpc": "2.0", "id": 5, "method": "roots/list"}
        assert pair.upstream(asked) == [asked]
        answer = {"jsonrpc": "2.0", "id": 5, "result": {"roots": []}}
        pair.send(answer)
        assert pair.upstream_got[-1] == answer

    def test_progress_notifications_reach_the_client_and_name_their_request(self) -> None:
        pair = ProxyPair(None)
        pair.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "slow", "_meta": {"progressToken": "t"}},
            }
        )
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 1},
        }
        assert pair.upstream(note) == [note]
        assert pair.related[-1] == 1

    def test_a_real_json_rpc_error_is_kept_under_every_strategy(self) -> None:
        for strategy in STRATEGIES:
            pair = demo(strategy=strategy)
            reply = pair.call("delete_db")
            assert reply["error"]["code"] == -32600, strategy

    def test_a_client_that_cancels_gets_no_late_answer(self) -> None:
        pair = ProxyPair(None)
        pair.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}})
        pair.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        assert pair.upstream_got[-1]["method"] == "notifications/cancelled"
        assert pair.upstream({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}) == []
        assert pair.tick(60) == []

    def test_unparseable_input_from_the_client_gets_parse_error(self) -> None:
        pair = ProxyPair(None)
        out = pair.core.client_unparseable("{", "Expecting value")
        assert out.to_client[0][0]["error"]["code"] == -32700


class TestStrategiesRewriteARealIsError:
    """weather('Atlantis') raises in the demo lab, which answers isError with the reason."""

    def test_is_error_passes_it_through(self) -> None:
        assert (
            text(demo(strategy="is_error").call("weather", {"city": "Atlantis"}))
            == "ERROR: no station near Atlantis"
        )

    def test_masked_hides_the_reason_as_the_official_sdk_does(self) -> None:
        reply = demo(strategy="masked").call("weather", {"city": "Atlantis"})
        assert reply["result"] == {
            "content": [{"type": "text", "text": "Error executing tool weather"}],
            "isError": True,
        }

    def test_collapse_makes_it_internal_error_with_the_reason(self) -> None:
        reply = demo(strategy="collapse").call("weather", {"city": "Atlantis"})
        assert reply["error"] == {"code": -32603, "message": "ERROR: no station near Atlantis"}

    def test_escape_ends_the_upstream_and_every_later_call_is_answered(self) -> None:
        pair = demo(strategy="escape")
        reply = pair.call("weather", {"city": "Atlantis"})
        assert pair.crashed and reply["error"]["code"] == -32603 and "crashed" in reply["error"]["message"]
        later = pair.call("add", {"x": 1, "y": 2})
        assert later["error"]["code"] == -32603 and later["error"]["data"] == {"upstream": "gone"}

    def test_input_required_asks_for_the_argument_the_failure_names_and_tries_again(self) -> None:
        server = MCPServer("s")
        server.add_tool("book", _book, {"type": "object", "properties": {"date": {"type": "string"}}})
        pair = ProxyPair(server, strategy="input_required")
        pair.handshake({"elicitation": {}})
        got = pair.send(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "book", "arguments": {"date": "14/03"}},
            }
        )
        (question,) = got
        assert question["method"] == "elicitation/create" and question["params"]["requestedSchema"][
            "required"
        ] == ["date"]
        assert "'date'" in question["params"]["message"]
        got = pair.send(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"date": "2025-03-14"}},
            }
        )
        assert got == [
            {
                "jsonrpc": "2.0",
                "id": 9,
                "result": {"content": [{"type": "text", "text": "booked 2025-03-14"}]},
            }
        ]
        assert pair.upstream_got[-1]["id"] != 9  # the retry is a new request upstream

    def test_input_required_passes_the_error_when_the_client_declared_no_elicitation(self) -> None:
        server = MCPServer("s")
        server.add_tool("book", _book, {"type": "object", "properties": {"date": {"type": "string"}}})
        pair = ProxyPair(server, strategy="input_required")
        pair.handshake({})
        reply = pair.call("book", {"date": "14/03"})
        assert reply["result"]["isError"] is True

    def test_input_required_in_the_stateless_era_answers_input_required_and_takes_the_retry(self) -> None:
        server = MCPServer("s")
        server.add_tool("book", _book, {"type": "object", "properties": {"date": {"type": "string"}}})
        pair = ProxyPair(server, strategy="input_required")
        params = {"name": "book", "arguments": {"date": "14/03"}, "_meta": STATELESS_META}
        first = pair.request("tools/call", params)["result"]
        assert first["resultType"] == "input_required"
        ((key, asked),) = first["inputRequests"].items()
        assert asked["method"] == "elicitation/create"
        retry = {
            **params,
            "inputResponses": {key: {"action": "accept", "content": {"date": "2025-03-14"}}},
            "requestState": first["requestState"],
        }
        reply = pair.request("tools/call", retry)
        assert reply["result"]["content"][0]["text"] == "booked 2025-03-14"
        assert "inputResponses" not in pair.upstream_got[-1]["params"]


def _book(date: str = "") -> str:
    if date != "2025-03-14":
        raise ValueError(f"invalid argument 'date': {date!r} is not an ISO date")
    return f"booked {date}"


class TestFaults:
    def test_a_raising_fault_answers_from_the_proxy_and_the_call_never_reaches_the_server(self) -> None:
        pair = demo(plan=plan([{"kind": "permanent", "tool": "add", "calls": [1]}]))
        sent = len(pair.upstream_got)
        reply = pair.call("add", {"x": 1, "y": 2})
        assert text(reply).startswith("ERROR: add is permanently unavailable")
        assert not any(m.get("method") == "tools/call" for m in pair.upstream_got[sent:])
        assert pair.call("add", {"x": 1, "y": 2})["result"]["isError"] is True  # permanent: sticks

    def test_the_strategy_decides_how_a_fault_arrives(self) -> None:
        rules = plan([{"kind": "transient", "tool": "add", "calls": [1]}])
        assert demo(plan=rules, strategy="collapse").call("add", {"x": 1, "y": 2})["error"]["code"] == -32603
        assert (
            text(demo(plan=rules, strategy="masked").call("add", {"x": 1, "y": 2}))
            == "Error executing tool add"
        )

    def test_post_commit_lets_the_call_through_then_says_it_failed(self) -> None:
        pair = demo(plan=plan([{"kind": "post_commit", "tool": "add", "calls": [1]}]))
        reply = pair.call("add", {"x": 1, "y": 2})
        assert pair.upstream_got[-1]["method"] == "tools/call"
        assert "nothing was stored" in text(reply)

    @pytest.mark.parametrize(
        ("kind", "extra", "expected"),
        [
            ("stale", {}, "Oslo: 1°C, light rain"),
            ("partial", {}, "Oslo: 4°C, light rain"),  # short text is kept whole
            ("wrong_units", {}, "Oslo: 39°C, light rain"),
            ("malformed", {}, "Oslo: 4°C,"),
            ("malformed", {"explicit": True}, "[malformed upstream response] Oslo: 4°C,"),
        ],
    )
    def test_content_kinds_rewrite_the_real_result(
        self, kind: str, extra: dict[str, Any], expected: str
    ) -> None:
        pair = demo(plan=plan([{"kind": kind, "tool": "weather", "calls": [1], **extra}]))
        assert text(pair.call("weather", {"city": "Oslo"})) == expected

    def test_silent_answers_the_last_real_success_without_calling(self) -> None:
        pair = demo(plan=plan([{"kind": "silent", "tool": "add", "calls": [2]}]))
        assert text(pair.call("add", {"x": 1, "y": 2})) == "3"
        sent = len(pair.upstream_got)
        assert text(pair.call("add", {"x": 5, "y": 5})) == "3"
        assert len(pair.upstream_got) == sent

    def test_a_timeout_fault_holds_the_call_for_the_timeout_then_fails(self) -> None:
        pair = demo(plan=plan([{"kind": "timeout", "tool": "add", "calls": [1]}]), timeout=5.0)
        assert (
            pair.send(
                {
                    "jsonrpc": "2.0",
                    "id": 50,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"x": 1, "y": 1}},
                }
            )
            == []
        )
        assert pair.tick(4.9) == []
        (reply,) = pair.tick(0.2)
        assert reply["id"] == 50 and "timed out after 5 s" in text(reply)

    def test_rate_limited_blocks_for_real_seconds(self) -> None:
        pair = demo(plan=plan([{"kind": "rate_limited", "tool": "add", "calls": [1], "retry_after_s": 10}]))
        assert "retry after 10 s" in text(pair.call("add", {"x": 1, "y": 1}))
        pair.clock.now += 4
        assert "retry after 6 s" in text(pair.call("add", {"x": 1, "y": 1}))
        pair.clock.now += 7
        assert text(pair.call("add", {"x": 1, "y": 1})) == "2"

    def test_bad_argument_under_input_required_asks_and_goes_on_with_the_answer(self) -> None:
        rules = plan(
            [{"kind": "bad_argument", "tool": "weather", "calls": [1], "argument": "city", "valid": "Oslo"}]
        )
        pair = demo(plan=rules, strategy="input_required")
        got = pair.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "weather", "arguments": {"city": "oslo"}},
            }
        )
        assert (
            got[0]["method"] == "elicitation/create" and "expected form 'Oslo'" in got[0]["params"]["message"]
        )
        got = pair.send(
            {
                "jsonrpc": "2.0",
                "id": got[0]["id"],
                "result": {"action": "accept", "content": {"city": "Oslo"}},
            }
        )
        assert got == [
            {
                "jsonrpc": "2.0",
                "id": 7,
                "result": {"content": [{"type": "text", "text": "Oslo: 4°C, light rain"}]},
            }
        ]

    def test_a_declined_question_fails_the_call_as_is_error_does(self) -> None:
        rules = plan(
            [{"kind": "bad_argument", "tool": "weather", "calls": [1], "argument": "city", "valid": "Oslo"}]
        )
        pair = demo(plan=rules, strategy="input_required")
        got = pair.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "weather", "arguments": {"city": "oslo"}},
            }
        )
        (reply,) = pair.send({"jsonrpc": "2.0", "id": got[0]["id"], "result": {"action": "decline"}})
        assert reply["id"] == 7 and "invalid argument 'city'" in text(reply)

    def test_a_fault_file_naming_a_missing_tool_warns_with_the_servers_tools(self) -> None:
        pair = demo(plan=plan([{"kind": "transient", "tool": "wether", "rate": 1.0}]))
        (line,) = pair.warnings
        assert "'wether' is not a tool of this server (its tools: add, weather, delete_db, book)" in line

    def test_an_argument_the_real_tool_lacks_switches_the_rule_off(self) -> None:
        rules = plan([{"kind": "bad_argument", "tool": "add", "rate": 1.0, "argument": "z", "valid": 1}])
        pair = demo(plan=rules)
        assert "add has no argument 'z' (it has: x, y); this rule is off" in pair.warnings[0]
        assert text(pair.call("add", {"x": 1, "y": 1})) == "2"

    def test_a_call_before_any_listing_waits_for_the_proxys_own_listing(self) -> None:
        pair = ProxyPair(build_demo_server(), plan=plan([{"kind": "transient", "tool": "add", "calls": [1]}]))
        reply = pair.request(
            "tools/call", {"name": "add", "arguments": {"x": 1, "y": 1}, "_meta": STATELESS_META}
        )
        assert "temporary failure" in text(reply)
        assert (
            pair.upstream_got[0]["method"] == "tools/list" and pair.upstream_got[0]["id"] == "harness-proxy-1"
        )


class TestSchedule:
    def test_the_same_calls_and_seed_give_the_same_bytes(self) -> None:
        rules = plan(
            [
                {"kind": "transient", "tool": "add", "rate": 0.5},
                {"kind": "stale", "tool": "weather", "rate": 0.3},
            ]
        )

        def run(seed: int) -> bytes:
            pair = demo(plan=rules, seed=seed)
            for i in range(12):
                pair.call("add", {"x": i, "y": 1})
                pair.call("weather", {"city": "Oslo"})
            pair.core.close()
            return b"".join(pair.lines)

        assert run(4) == run(4)
        assert run(4) != run(5)

    def test_a_tools_draws_do_not_depend_on_other_tools_calls(self) -> None:
        rules = plan([{"kind": "transient", "tool": "add", "rate": 0.5}])

        def hits(other_calls: int) -> list[bool]:
            pair = demo(plan=rules, seed=1)
            out = []
            for i in range(10):
                for _ in range(other_calls):
                    pair.call("weather", {"city": "Oslo"})
                out.append(pair.call("add", {"x": i, "y": 0})["result"].get("isError", False))
            return out

        assert hits(0) == hits(2)

    def test_a_higher_rate_hits_a_superset_of_calls(self) -> None:
        def hits(rate: float) -> set[int]:
            pair = demo(plan=plan([{"kind": "permanent", "tool": "add", "rate": rate}]), seed=2)
            engine = pair.core.engine
            return {n for n in range(1, 200) if engine.scheduled(0, n)}

        assert hits(0.2) <= hits(0.5) and len(hits(0.2)) < len(hits(0.5))


class TestEvents:
    def test_remove_tool_hides_it_refuses_calls_and_notifies(self) -> None:
        pair = demo(plan=plan(events=[{"kind": "remove_tool", "tool": "add", "at_call": 1}]))
        got = pair.send(
            {
                "jsonrpc": "2.0",
                "id": 40,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"x": 1, "y": 1}},
            }
        )
        assert [m.get("method") for m in got] == [None, "notifications/tools/list_changed"]
        assert "add" not in [t["name"] for t in pair.request("tools/list")["result"]["tools"]]
        assert pair.call("add", {"x": 1, "y": 1})["error"]["code"] == -32601

    def test_add_tool_holds_a_real_tool_back_until_then(self) -> None:
        pair = demo(plan=plan(events=[{"kind": "add_tool", "tool": "add", "at_step": 4}]))
        assert "add" not in [t["name"] for t in pair.request("tools/list")["result"]["tools"]]
        assert pair.call("add", {"x": 1, "y": 1})["error"]["code"] == -32601
        pair.request("ping")  # the fourth request: the event fires after its answer
        assert pair.received[-1]["method"] == "notifications/tools/list_changed"
        assert text(pair.call("add", {"x": 1, "y": 1})) == "2"

    def test_change_schema_renames_in_the_listing_translates_calls_and_refuses_the_old_shape(self) -> None:
        events = [{"kind": "change_schema", "tool": "weather", "at_call": 1, "variant": {"city": "place"}}]
        pair = demo(plan=plan(events=events))
        pair.call("add", {"x": 1, "y": 1})
        tools = {t["name"]: t for t in pair.request("tools/list")["result"]["tools"]}
        assert tools["weather"]["inputSchema"]["required"] == ["place"]
        assert text(pair.call("weather", {"place": "Oslo"})) == "Oslo: 4°C, light rain"
        assert pair.upstream_got[-1]["params"]["arguments"] == {"city": "Oslo"}
        stale = pair.call("weather", {"city": "Oslo"})
        assert stale["result"]["isError"] is True and "missing required argument 'place'" in text(stale)

    def test_a_catalogue_variant_name_works_on_a_real_tool_with_the_same_arguments(self) -> None:
        events = [
            {"kind": "change_schema", "tool": "weather", "at_call": 1, "variant": "v2", "notify": False}
        ]
        pair = demo(plan=plan(events=events))
        got = pair.send(
            {
                "jsonrpc": "2.0",
                "id": 60,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"x": 1, "y": 1}},
            }
        )
        assert len(got) == 1  # notify = false: no list_changed
        assert text(pair.call("weather", {"location": "Oslo"})) == "Oslo: 4°C, light rain"

    def test_revoke_keeps_it_listed_and_answers_not_permitted(self) -> None:
        pair = demo(plan=plan(events=[{"kind": "revoke", "tool": "add", "at_call": 1}]))
        pair.call("weather", {"city": "Oslo"})
        assert pair.call("add", {"x": 1, "y": 1})["error"]["code"] == -32600

    def test_a_stateless_listen_stream_that_asked_for_tool_changes_gets_the_event(self) -> None:
        pair = ProxyPair(
            build_demo_server(), plan=plan(events=[{"kind": "remove_tool", "tool": "add", "at_call": 1}])
        )
        listen = {
            "jsonrpc": "2.0",
            "id": "L",
            "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": STATELESS_META},
        }
        pair.send(listen)
        pair.request(
            "tools/call", {"name": "weather", "arguments": {"city": "Oslo"}, "_meta": STATELESS_META}
        )
        events = [m for m in pair.received if m.get("method") == "notifications/tools/list_changed"]
        assert events and events[-1]["params"]["_meta"][SUBSCRIPTION_ID] == "L"

    def test_listchanged_is_declared_when_an_event_will_notify(self) -> None:
        server = MCPServer("s")
        server.add_tool("t", lambda: "ok", {"type": "object", "properties": {}})
        pair = ProxyPair(server, plan=plan(events=[{"kind": "remove_tool", "tool": "t", "at_call": 1}]))
        result = pair.handshake()["result"]
        assert result["capabilities"]["tools"]["listChanged"] is True


class TestNoClientWaitsForever:
    def test_a_hung_upstream_times_out_with_internal_error(self) -> None:
        pair = ProxyPair(None, timeout=3.0)
        pair.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        (reply,) = pair.tick(3.1)
        assert reply["error"]["code"] == -32603 and reply["error"]["data"] == {"upstream": "timeout"}
        assert pair.upstream_got[-1]["method"] == "notifications/cancelled"

    def test_progress_keeps_a_long_call_alive(self) -> None:
        pair = ProxyPair(None, timeout=3.0)
        pair.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "x", "_meta": {"progressToken": 1}},
            }
        )
        pair.tick(2.0)
        pair.upstream(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1},
            }
        )
        assert [m for m in pair.tick(2.0) if "error" in m] == []
        assert pair.tick(1.5)[-1]["error"]["code"] == -32603

    def test_a_dead_upstream_answers_what_was_in_flight_and_everything_after(self) -> None:
        pair = ProxyPair(None)
        pair.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        out = pair.core.upstream_gone("exited with code 3: boom")
        assert out.to_client[0][0]["error"]["message"] == "the upstream server exited with code 3: boom"
        assert out.warnings == ["upstream exited with code 3: boom"]
        assert pair.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})[0]["error"]["code"] == -32603

    def test_garbage_fails_what_is_in_flight_after_the_grace(self) -> None:
        pair = ProxyPair(None, timeout=30.0, grace=1.0)
        pair.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        pair.core.upstream_garbage(b"Server started on stdio")
        assert pair.tick(0.5) == []
        (reply,) = pair.tick(0.6)
        assert "not JSON-RPC" in reply["error"]["message"]

    def test_a_good_answer_within_the_grace_still_counts(self) -> None:
        pair = ProxyPair(None, grace=1.0)
        pair.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        pair.core.upstream_garbage(b"log line")
        assert pair.upstream({"jsonrpc": "2.0", "id": 1, "result": {}}) == [
            {"jsonrpc": "2.0", "id": 1, "result": {}}
        ]


class TestTrace:
    def test_both_sides_and_the_proxys_acts_are_recorded(self) -> None:
        pair = demo(plan=plan([{"kind": "transient", "tool": "add", "calls": [1]}]), strategy="masked")
        pair.call("add", {"x": 1, "y": 1})
        pair.call("weather", {"city": "Atlantis"})
        pair.core.close()
        dirs = {line["dir"] for line in pair.trace()}
        assert dirs == {"c2s", "s2c", "p2u", "u2p", "harness"}
        harness = [line for line in pair.trace() if line["dir"] == "harness"]
        assert harness[0]["fault"] == {
            "kind": "transient",
            "tool": "add",
            "call": 1,
            "rule": 0,
            "explicit": True,
        }
        # The injected failure is masked as a real one is: both are rewrites of the strategy.
        assert harness[1]["rewrite"] == {"id": 2, "tool": "add", "by": "masked"}
        assert harness[2]["rewrite"] == {"id": 3, "tool": "weather", "by": "masked"}
        assert harness[-1]["summary"]["faults"] == {"transient": 1}
        assert harness[-1]["summary"]["rewrites"] == {"masked": 2}


class TestCountsAndRecordsThatStayRight:
    def test_a_message_passed_on_unchanged_is_written_once(self) -> None:
        city = "Atlantis" + "x" * 100_000
        pair = demo()
        reply = pair.call("weather", {"city": city})
        assert reply["result"]["isError"] is True  # passed through as it came, under is_error
        joined = b"".join(pair.lines)
        assert joined.count(city.encode()) == 2  # the request once, the answer once
        records = pair.trace()
        assert {"dir": "p2u", "same": "c2s"} in records and {"dir": "s2c", "same": "u2p"} in records
        # What the proxy changes is written on both sides, as it was and as it went on.
        masked = demo(strategy="masked")
        masked.call("weather", {"city": city})
        after = [r for r in masked.trace() if r["dir"] == "s2c" and "msg" in r]
        assert after[-1]["msg"]["result"]["content"][0]["text"] == "Error executing tool weather"

    def test_calls_after_a_crash_are_still_counted(self) -> None:
        pair = demo(strategy="escape")
        pair.call("weather", {"city": "Atlantis"})
        pair.call("add", {"x": 1, "y": 2})
        pair.call("add", {"x": 1, "y": 2})
        assert pair.core.summary()["calls"] == 3
        assert pair.core.summary()["upstream"] == {"crashed": 1}

    @pytest.mark.parametrize("strategy", ["masked", "collapse"])
    def test_an_injected_failure_counts_as_the_strategys_rewrite(self, strategy: str) -> None:
        pair = demo(plan=plan([{"kind": "transient", "tool": "add", "calls": [1]}]), strategy=strategy)
        pair.call("add", {"x": 1, "y": 1})
        pair.call("weather", {"city": "Atlantis"})
        summary = pair.core.summary()
        assert summary["faults"] == {"transient": 1}
        assert summary["rewrites"] == {strategy: 2}

    def test_stop_answers_every_request_still_waiting_once(self) -> None:
        pair = ProxyPair(None, timeout=None)
        pair.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})  # a hung server
        pair.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}})
        got = pair._pump(pair.core.stop("SIGTERM"))
        assert sorted(m["id"] for m in got) == [1, 7]
        assert all(
            m["error"]["message"] == "the proxy stopped (SIGTERM) before the upstream server answered"
            for m in got
        )
        assert pair._pump(pair.core.stop("SIGTERM")) == []
        assert pair.core.summary()["upstream"] == {"stopped": 2}
