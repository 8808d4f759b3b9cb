"""The server utilities: logging/setLevel, progress, completion/complete, resource subscriptions.

Each test builds one small server and runs it through ``ClientServerPair``, so
every reply and notification is also checked against the official ``mcp_types``.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.pair import ClientServerPair, error_code, result_of

from harness.protocol import MCPServer
from harness.protocol.server import LOG_LEVELS, MAX_COMPLETIONS


def utility_server() -> MCPServer:
    server = MCPServer("utilities", "1")

    def chatty() -> str:
        for level in LOG_LEVELS:
            server.log(level, {"said": level}, logger="chatty")
        return "done"

    def slow() -> str:
        for step in (1, 2, 3):
            server.progress(step, 3, message=f"step {step}")
        return "done"

    server.add_tool("chatty", chatty, description="Logs once at every level.")
    server.add_tool("slow", slow, description="Reports three progress steps.")
    server.add_resource("mem://a", "a", text="A")
    server.add_resource_template("mem://item/{id}", "item", lambda id: f"item {id}")
    server.add_prompt("greet", "Hello {name}.", "Greets")
    server.add_completion("greet", "name", ["Ada", "Alan", "Grace"])
    server.add_completion("mem://item/{id}", "id", [f"{i:03d}" for i in range(150)])
    return server


@pytest.fixture
def pair() -> ClientServerPair:
    return ClientServerPair(utility_server())


def messages(pair: ClientServerPair, method: str) -> list[dict[str, Any]]:
    return [n["params"] for n in pair.notifications if n["method"] == method]


class TestCapabilities:
    def test_initialize_declares_logging_completions_and_subscribe(self) -> None:
        pair = ClientServerPair(utility_server(), handshake=False)
        caps = result_of(
            pair.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
        )["capabilities"]
        assert caps["logging"] == {} and caps["completions"] == {}
        assert caps["resources"]["subscribe"] is True


class TestLogging:
    def test_without_set_level_every_level_is_sent_in_order(self, pair: ClientServerPair) -> None:
        pair.request(2, "tools/call", {"name": "chatty"})
        sent = messages(pair, "notifications/message")
        assert [m["level"] for m in sent] == list(LOG_LEVELS)
        assert sent[0] == {"level": "debug", "logger": "chatty", "data": {"said": "debug"}}

    def test_set_level_drops_less_severe_messages(self, pair: ClientServerPair) -> None:
        assert result_of(pair.request(2, "logging/setLevel", {"level": "error"})) == {}
        pair.request(3, "tools/call", {"name": "chatty"})
        assert [m["level"] for m in messages(pair, "notifications/message")] == list(LOG_LEVELS[4:])

    @pytest.mark.parametrize("level", ["verbose", "ERROR", None, 3])
    def test_an_unknown_level_is_invalid_params(self, pair: ClientServerPair, level: Any) -> None:
        assert error_code(pair.request(2, "logging/setLevel", {"level": level})) == -32602

    def test_a_server_logging_an_unknown_level_is_a_bug_raised_at_once(self) -> None:
        with pytest.raises(ValueError, match="unknown log level 'loud'"):
            MCPServer("x").log("loud", "hi")

    def test_nothing_is_logged_before_the_handshake(self) -> None:
        server = MCPServer("x")
        server.log("error", "too early")
        assert server.take_notifications() == []


class TestProgress:
    def test_progress_carries_the_request_token(self, pair: ClientServerPair) -> None:
        pair.request(2, "tools/call", {"name": "slow", "_meta": {"progressToken": "tok"}})
        sent = messages(pair, "notifications/progress")
        assert [(p["progressToken"], p["progress"], p["total"]) for p in sent] == [
            ("tok", s, 3) for s in (1, 2, 3)
        ]
        assert sent[-1]["message"] == "step 3"

    def test_no_token_means_no_progress_notifications(self, pair: ClientServerPair) -> None:
        pair.request(2, "tools/call", {"name": "slow", "_meta": {"progressToken": "tok"}})
        assert len(messages(pair, "notifications/progress")) == 3
        pair.request(3, "tools/call", {"name": "slow"})
        assert messages(pair, "notifications/progress") == []


class TestCompletion:
    def test_prompt_argument_values_are_filtered_by_prefix(self, pair: ClientServerPair) -> None:
        params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}}
        assert result_of(pair.request(2, "completion/complete", params)) == {
            "completion": {"values": ["Ada", "Alan"], "total": 2, "hasMore": False}
        }

    def test_an_argument_without_values_completes_to_nothing(self, pair: ClientServerPair) -> None:
        params = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "other", "value": ""}}
        assert result_of(pair.request(2, "completion/complete", params))["completion"]["values"] == []

    def test_template_values_are_capped_with_has_more(self, pair: ClientServerPair) -> None:
        ref = {"type": "ref/resource", "uri": "mem://item/{id}"}
        params = {"ref": ref, "argument": {"name": "id", "value": ""}}
        completion = result_of(pair.request(2, "completion/complete", params))["completion"]
        assert len(completion["values"]) == MAX_COMPLETIONS
        assert completion["total"] == 150 and completion["hasMore"] is True

    @pytest.mark.parametrize(
        "params",
        [
            {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "name", "value": ""}},
            {"ref": {"type": "ref/resource", "uri": "mem://a"}, "argument": {"name": "id", "value": ""}},
            {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name"}},
            {"ref": "greet", "argument": {"name": "name", "value": ""}},
        ],
    )
    def test_a_bad_ref_or_argument_is_invalid_params(self, pair: ClientServerPair, params: Any) -> None:
        assert error_code(pair.request(2, "completion/complete", params)) == -32602


class TestSubscriptions:
    def test_a_subscribed_resource_update_is_notified(self, pair: ClientServerPair) -> None:
        assert result_of(pair.request(2, "resources/subscribe", {"uri": "mem://a"})) == {}
        pair.server.resource_updated("mem://a")
        assert messages(pair, "notifications/resources/updated") == [{"uri": "mem://a"}]

    def test_after_unsubscribe_updates_are_silent(self, pair: ClientServerPair) -> None:
        pair.request(2, "resources/subscribe", {"uri": "mem://item/7"})
        assert result_of(pair.request(3, "resources/unsubscribe", {"uri": "mem://item/7"})) == {}
        pair.server.resource_updated("mem://item/7")
        assert messages(pair, "notifications/resources/updated") == []

    def test_an_update_nobody_subscribed_to_is_silent(self, pair: ClientServerPair) -> None:
        pair.server.resource_updated("mem://a")
        assert messages(pair, "notifications/resources/updated") == []

    def test_subscribing_to_an_unknown_resource_is_resource_not_found(self, pair: ClientServerPair) -> None:
        assert error_code(pair.request(2, "resources/subscribe", {"uri": "mem://zzz"})) == -32002

    def test_subscribe_needs_a_string_uri(self, pair: ClientServerPair) -> None:
        assert error_code(pair.request(2, "resources/subscribe", {})) == -32602
