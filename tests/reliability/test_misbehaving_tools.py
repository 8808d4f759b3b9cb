"""Tools that hang, return what JSON cannot carry, return too much, or call back into the server.

Each is a tool failure reported through the active strategy (``isError`` under
is_error and masked, -32603 under collapse, the exception itself under escape),
never a broken reply, a dead server or a deadlock; the session answers ``add``
afterwards. Hanging tools wait on an Event released at teardown, so nothing
here would finish without the timeout, and no thread outlives the test.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from helpers.pair import text_of

import harness.fixtures.demo
from harness.cli.serve import command as serve_command
from harness.protocol import INTERNAL_ERROR, LATEST_VERSION, MCPServer
from harness.protocol.payload import DEFAULT_MAX_RESULT_BYTES
from harness.protocol.runner import ThreadedRunner, ToolAborted, ToolNesting, ToolTimeout, run_direct

INIT = {"protocolVersion": LATEST_VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
HANDLED = ("is_error", "masked", "collapse")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown: every hanging tool then returns, so no thread is left behind."""
    event = threading.Event()
    yield event
    event.set()


def ready(server: MCPServer) -> MCPServer:
    server.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server


def lab(strategy: str = "is_error", runner: Any = None, **tools: Callable[..., Any]) -> MCPServer:
    server = MCPServer("lab", tool_errors=strategy, tool_runner=runner)
    server.add_tool("add", lambda x, y: str(x + y))
    for name, fn in tools.items():
        server.add_tool(name, fn)
    return ready(server)


def call(
    server: MCPServer, name: str, arguments: dict[str, Any] | None = None, id: int = 1
) -> dict[str, Any]:
    """tools/call through the byte edge; the reply must be one valid JSON-RPC response."""
    message = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}}
    if arguments is not None:
        message["params"]["arguments"] = arguments
    out = server.handle_text(json.dumps(message))
    assert out is not None
    reply: dict[str, Any] = json.loads(out)
    assert reply["id"] == id and ("result" in reply) != ("error" in reply)
    return reply


def assert_add_works(server: MCPServer) -> None:
    assert call(server, "add", {"x": 2, "y": 3}, id=99)["result"] == {
        "content": [{"type": "text", "text": "5"}]
    }


def assert_reported(reply: dict[str, Any], strategy: str, tool: str, reason: str) -> None:
    """The failure arrived on the strategy's channel, with the reason where it is shown."""
    if strategy == "is_error":
        assert reply["result"]["isError"] is True
        assert re.search(reason, text_of(reply["result"])), text_of(reply["result"])
        assert text_of(reply["result"]).startswith("ERROR: ")
    elif strategy == "masked":
        assert reply["result"] == {
            "content": [{"type": "text", "text": f"Error executing tool {tool}"}],
            "isError": True,
        }
    else:
        assert reply["error"]["code"] == INTERNAL_ERROR
        assert re.search(reason, reply["error"]["message"]), reply["error"]["message"]


# -- hanging tools --------------------------------------------------------------


@pytest.mark.parametrize("strategy", HANDLED)
def test_a_hanging_tool_is_cut_at_its_timeout_and_reported_through_the_strategy(
    strategy: str, release: threading.Event
) -> None:
    runner = ThreadedRunner(0.2)
    server = lab(strategy, runner, hang=lambda: release.wait() and "late")
    reply = call(server, "hang")
    assert_reported(reply, strategy, "hang", r"^(ERROR: )?tool 'hang' timed out after 0\.2s$")
    assert_add_works(server)
    assert runner.abandoned == 1


def test_under_escape_a_timeout_leaves_the_server_like_any_tool_exception(release: threading.Event) -> None:
    server = lab("escape", ThreadedRunner(0.1), hang=release.wait)
    with pytest.raises(ToolTimeout, match=r"timed out after 0\.1s"):
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang"}})


def test_a_late_answer_from_a_cut_tool_is_dropped_and_its_thread_accounted_for(
    release: threading.Event,
) -> None:
    finished = threading.Event()

    def slow() -> str:
        release.wait()
        finished.set()
        return "late"

    runner = ThreadedRunner(0.1)
    server = lab("is_error", runner, slow=slow)
    assert "timed out" in text_of(call(server, "slow")["result"])
    assert runner.abandoned == 1
    release.set()
    assert finished.wait(5.0)
    for _ in range(500):  # the thread decrements after setting `finished`; give it a moment
        if runner.abandoned == 0:
            break
        threading.Event().wait(0.01)
    assert runner.abandoned == 0
    assert_add_works(server)
    assert server.take_notifications() == []


def test_hung_threads_are_capped_and_later_calls_fail_at_once(release: threading.Event) -> None:
    runner = ThreadedRunner(0.05, max_abandoned=2)
    started: list[int] = []

    def hang() -> None:
        started.append(1)
        release.wait()

    server = lab("is_error", runner, hang=hang)
    for _ in range(2):
        assert "timed out after" in text_of(call(server, "hang")["result"])
    refused = text_of(call(server, "hang")["result"])
    assert "not run: 2 earlier calls still hang" in refused
    assert len(started) == 2  # the third call never started a thread


def test_without_a_runner_the_server_calls_the_tool_in_place() -> None:
    where: list[threading.Thread] = []
    server = lab(here=lambda: where.append(threading.current_thread()) or "ok")
    assert server.tool_runner is None
    call(server, "here")
    assert where == [threading.current_thread()]
    assert run_direct("f", lambda a: a * 2, {"a": 21}) == 42


def test_the_threaded_runner_runs_the_tool_on_another_thread_and_returns_its_value() -> None:
    where: list[threading.Thread] = []
    server = lab(
        "is_error", ThreadedRunner(5.0), there=lambda: where.append(threading.current_thread()) or "ok"
    )
    assert call(server, "there")["result"] == {"content": [{"type": "text", "text": "ok"}]}
    assert where and where[0] is not threading.current_thread()


@pytest.mark.parametrize("strategy", HANDLED)
def test_a_tool_calling_sys_exit_cannot_end_the_server(strategy: str) -> None:
    def leave() -> None:
        raise SystemExit(3)

    server = lab(strategy, ThreadedRunner(5.0), leave=leave)
    assert_reported(call(server, "leave"), strategy, "leave", "tool 'leave' raised SystemExit")
    assert_add_works(server)


def test_runner_arguments_are_checked() -> None:
    for bad in ({"timeout": 0}, {"timeout": -1}, {"timeout": 1, "max_depth": 0}):
        with pytest.raises(ValueError):
            ThreadedRunner(**bad)
    assert issubclass(ToolAborted, Exception) and issubclass(ToolNesting, Exception)


def test_harness_serve_cuts_a_hanging_tool_at_call_timeout(
    monkeypatch: pytest.MonkeyPatch, release: threading.Event
) -> None:
    built = harness.fixtures.demo.build_demo_server

    def with_hang(strategy: str = "is_error", **kw: Any) -> MCPServer:
        server = built(strategy, **kw)
        server.add_tool("hang", release.wait)
        server.set_allowed_tools([*(server.allowed_tools or ()), "hang"])
        return server

    monkeypatch.setattr(harness.fixtures.demo, "build_demo_server", with_hang)
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang"}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"x": 1, "y": 2}},
        },
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in lines)
    result = CliRunner().invoke(serve_command, ["--demo", "--call-timeout", "0.2"], input=stdin)
    assert result.exit_code == 0, result.output
    replies = {r["id"]: r for r in map(json.loads, result.stdout.splitlines())}
    assert text_of(replies[1]["result"]) == "ERROR: tool 'hang' timed out after 0.2s"
    assert text_of(replies[2]["result"]) == "3"


# -- results JSON cannot carry, and results that are too large ------------------------

cycle: list[Any] = []
cycle.append(cycle)


def deep(n: int) -> Any:
    value: Any = "bottom"
    for _ in range(n):
        value = [value]
    return value


UNCARRIABLE: list[tuple[str, Any, str]] = [
    ("a set", {1, 2}, "no content block can carry"),
    ("an object", object(), "no content block can carry"),
    ("bytes", b"\x00\xff", "no content block can carry"),
    ("a generator", (i for i in range(3)), "no content block can carry"),
    ("NaN in structured content", {"content": [], "structuredContent": {"v": float("nan")}}, "not JSON"),
    (
        "Infinity in a block's _meta",
        [{"type": "text", "text": "x", "_meta": {"v": float("inf")}}],
        "not JSON",
    ),
    ("a set inside a block", [{"type": "text", "text": "x", "extra": {1, 2}}], "a set, which JSON cannot"),
    ("bytes as text", [{"type": "text", "text": b"raw"}], "needs a string 'text'"),
    ("an int key", {"content": [], "structuredContent": {1: "a"}}, "int key"),
    ("a tuple key", {"content": [], "structuredContent": {(1, 2): "a"}}, "tuple key"),
    ("a cycle", {"content": [], "structuredContent": {"me": cycle}}, "nested deeper than .* cycle"),
    ("nesting 10,000 deep", {"content": [], "structuredContent": {"v": deep(10_000)}}, "nested deeper than"),
    ("content that is not a list", {"content": "text"}, "must be a list"),
    ("an int with 5,000 digits", 10**5000, "digits"),
]


@pytest.mark.parametrize("strategy", HANDLED)
@pytest.mark.parametrize(("value", "reason"), [u[1:] for u in UNCARRIABLE], ids=[u[0] for u in UNCARRIABLE])
def test_a_result_json_cannot_carry_is_a_tool_failure_not_a_broken_reply(
    strategy: str, value: Any, reason: str
) -> None:
    for runner in (None, ThreadedRunner(5.0)):
        server = lab(strategy, runner, bad=lambda: value)
        assert_reported(call(server, "bad"), strategy, "bad", reason)
        assert_add_works(server)


def test_under_escape_a_result_json_cannot_carry_escapes_like_any_tool_exception() -> None:
    server = lab("escape", bad=lambda: {1, 2})
    with pytest.raises(TypeError, match="no content block can carry"):
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "bad"}})


def test_the_default_result_limit_is_4_mib() -> None:
    assert MCPServer("s").max_result_bytes == DEFAULT_MAX_RESULT_BYTES == 4 * 1024 * 1024
    server = lab(
        huge=lambda: "x" * (DEFAULT_MAX_RESULT_BYTES + 1), fits=lambda: "x" * DEFAULT_MAX_RESULT_BYTES
    )
    assert "above the 4194304-byte limit" in text_of(call(server, "huge")["result"])
    assert call(server, "fits")["result"].get("isError") is None


SIZED: list[tuple[str, Callable[[int], Any], bool]] = [
    ("ASCII text at the limit", lambda n: "x" * n, True),
    ("ASCII text one byte over", lambda n: "x" * (n + 1), False),
    ("two-byte text at the limit", lambda n: "é" * (n // 2), True),
    ("two-byte text one character over", lambda n: "é" * (n // 2 + 1), False),
    ("a content list over the limit", lambda n: [{"type": "text", "text": "x" * n}], False),
    ("a result dict over the limit", lambda n: {"content": [], "structuredContent": {"v": "x" * n}}, False),
    ("a small content list", lambda n: [{"type": "text", "text": "x" * (n // 2)}], True),
]


@pytest.mark.parametrize("strategy", HANDLED)
@pytest.mark.parametrize(("make", "fits"), [s[1:] for s in SIZED], ids=[s[0] for s in SIZED])
def test_a_result_over_max_result_bytes_is_a_tool_failure(
    strategy: str, make: Callable[[int], Any], fits: bool
) -> None:
    limit = 1000
    server = lab(strategy, sized=lambda: make(limit))
    server.max_result_bytes = limit
    reply = call(server, "sized")
    if fits:
        assert reply["result"].get("isError") is None
    else:
        assert_reported(reply, strategy, "sized", r"tool result is \d+ bytes, above the 1000-byte limit")
    assert_add_works(server)


# -- tools that call back into the server -------------------------------------------


@pytest.mark.parametrize("runner", [None, ThreadedRunner(5.0)], ids=["in place", "threaded"])
def test_a_tool_that_calls_the_server_from_inside_gets_its_answer_without_deadlock(runner: Any) -> None:
    server = lab("is_error", runner)

    def relay(x: int) -> str:
        inner = server.handle(
            {
                "jsonrpc": "2.0",
                "id": "inner",
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"x": x, "y": 1}},
            }
        )
        assert inner is not None
        return "inner said " + text_of(inner["result"])

    server.add_tool("relay", relay)
    assert text_of(call(server, "relay", {"x": 41})["result"]) == "inner said 42"
    assert_add_works(server)


@pytest.mark.parametrize("runner", [None, ThreadedRunner(5.0, max_depth=8)], ids=["in place", "threaded"])
def test_a_tool_that_calls_itself_through_the_server_forever_still_ends(runner: Any) -> None:
    server = lab("is_error", runner)
    depth: list[int] = []

    def again() -> str:
        depth.append(1)
        inner = server.handle(
            {"jsonrpc": "2.0", "id": len(depth), "method": "tools/call", "params": {"name": "again"}}
        )
        assert inner is not None
        return json.dumps(inner)

    server.add_tool("again", again)
    reply = call(server, "again")
    assert "result" in reply or reply["error"]["code"] == INTERNAL_ERROR
    if runner is not None:
        assert len(depth) == 8  # the ninth nested call was refused before it ran
        assert "nested deeper than 8 calls" in json.dumps(reply)
    assert_add_works(server)


def test_a_nested_call_inherits_the_callers_deadline(release: threading.Event) -> None:
    server = lab("is_error", ThreadedRunner(0.3))
    server.add_tool("hang", release.wait)
    inner_text: list[str] = []
    done = threading.Event()

    def outer() -> str:
        threading.Event().wait(0.1)  # spend a third of the budget before calling in
        inner = server.handle(
            {"jsonrpc": "2.0", "id": "i", "method": "tools/call", "params": {"name": "hang"}}
        )
        assert inner is not None
        inner_text.append(text_of(inner["result"]))
        done.set()
        return "outer done"

    server.add_tool("outer", outer)
    call(server, "outer")  # the outer call may be cut at the same instant: both share one deadline
    assert done.wait(5.0)
    match = re.fullmatch(r"ERROR: tool 'hang' timed out after ([0-9.]+)s", inner_text[0])
    assert match is not None, inner_text
    assert float(match.group(1)) <= 0.2  # what was left of the outer's 0.3 s, not a fresh 0.3 s
    assert_add_works(server)
