"""The allow-list holds: no disallowed tool ever executes, whatever the sequence.

Executions are counted inside the tool functions, not read from replies, and
compared with a model of the rules: a tools/call runs its tool if and only if
the tool is registered, allow-listed at that moment (None allows all) and its
arguments fit. Sequences mix direct calls, calls through the byte edge, calls a
tool makes back into the server, and revocations (``set_allowed_tools``) both
between calls and from inside a running tool, under every strategy, with the
tools run in place or on the threaded runner.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocol import LATEST_VERSION, STRATEGIES, MCPServer
from harness.protocol.runner import ThreadedRunner

PLAIN = ("t0", "t1", "t2")
"""Tools that only count; t1 raises after counting (a failure must not hide an execution)."""
NAMES = (*PLAIN, "relay", "ghost")
"""What calls may name; ``ghost`` is never registered."""
N_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
RELAY_SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "target": {"type": "string"},
        "revoke": {"type": ["array", "null"], "items": {"type": "string"}},
    },
    "required": ["n", "target"],
}

allow_lists = st.none() | st.sets(st.sampled_from((*NAMES, "other"))).map(sorted)
arguments = st.sampled_from([{"n": 1}, {"n": "one"}, {}, None])
direct_call = st.tuples(st.just("call"), st.sampled_from(NAMES), arguments, st.booleans())
relay_call = st.tuples(
    st.just("relay"),
    st.sampled_from(NAMES),
    st.sampled_from([{"n": 1}, {"n": "one"}]),
    allow_lists | st.just("keep"),
)
revoke = st.tuples(st.just("allow"), allow_lists)
operations = st.lists(st.one_of(direct_call, relay_call, revoke), max_size=25)


class Lab:
    """A server whose tools log every execution, and the model the log must equal."""

    def __init__(self, strategy: str, allowed: list[str] | None, threaded: bool) -> None:
        self.server = MCPServer(
            "allow",
            allowed_tools=allowed,
            tool_errors=strategy,
            tool_runner=ThreadedRunner(10.0) if threaded else None,
        )
        self.executed: list[str] = []
        self.expected: list[str] = []
        self.model_allowed: set[str] | None = None if allowed is None else set(allowed)
        for name in PLAIN:
            self.server.add_tool(name, self._plain(name), N_SCHEMA)
        self.server.add_tool("relay", self._relay, RELAY_SCHEMA)
        init = {
            "protocolVersion": LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "p", "version": "0"},
        }
        self.server.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        self.server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _plain(self, name: str) -> Any:
        def tool(n: int) -> str:
            self.executed.append(name)
            if name == "t1":
                raise RuntimeError("t1 fails after running")
            return name

        return tool

    def _relay(self, n: int, target: str, revoke: list[str] | str | None = "keep") -> str:
        self.executed.append("relay")
        if revoke != "keep":
            self.server.set_allowed_tools(revoke)  # type: ignore[arg-type]
        self.send({"name": target, "arguments": {"n": n}}, text=False)
        return "relayed"

    def send(self, params: dict[str, Any], *, text: bool) -> None:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        try:
            if text:
                self.server.handle_text(json.dumps(message))
            else:
                self.server.handle(message)
        except Exception:
            if self.server.tool_errors != "escape":
                raise  # only the naive server lets a tool's exception out

    # -- the model -------------------------------------------------------------

    def permits(self, name: str, args: dict[str, Any] | None) -> bool:
        registered = name in (*PLAIN, "relay")
        allowed = self.model_allowed is None or name in self.model_allowed
        fits = isinstance(args, dict) and type(args.get("n")) is int
        if name == "relay":
            fits = fits and isinstance(args, dict) and isinstance(args.get("target"), str)
        return registered and allowed and fits

    def run(self, op: tuple[Any, ...]) -> None:
        if op[0] == "allow":
            self.model_allowed = None if op[1] is None else set(op[1])
            self.server.set_allowed_tools(op[1])
        elif op[0] == "call":
            _, name, args, text = op
            if self.permits(name, args):
                self.expected.append(name)
            params: dict[str, Any] = {"name": name}
            if args is not None:
                params["arguments"] = args
            self.send(params, text=text)
        else:
            _, target, args, revoke = op
            relay_args = {**args, "target": target, "revoke": None if revoke == "keep" else revoke}
            if revoke == "keep":
                relay_args.pop("revoke")
            if self.permits("relay", relay_args):
                self.expected.append("relay")
                if revoke != "keep":
                    self.model_allowed = None if revoke is None else set(revoke)
                if self.permits(target, args):
                    self.expected.append(target)
            self.send({"name": "relay", "arguments": relay_args}, text=True)


@settings(max_examples=300)
@given(
    strategy=st.sampled_from(STRATEGIES),
    allowed=allow_lists,
    threaded=st.booleans(),
    ops=operations,
)
def test_no_disallowed_tool_ever_executes_and_every_allowed_call_does(
    strategy: str, allowed: list[str] | None, threaded: bool, ops: list[tuple[Any, ...]]
) -> None:
    lab = Lab(strategy, allowed, threaded)
    for op in ops:
        lab.run(op)
    assert lab.executed == lab.expected


def test_the_model_is_not_vacuous() -> None:
    lab = Lab("is_error", ["t0", "relay"], threaded=False)
    for op in [
        ("call", "t0", {"n": 1}, True),
        ("call", "t1", {"n": 1}, False),
        ("relay", "t0", {"n": 1}, ["relay"]),
        ("call", "t0", {"n": 1}, True),
        ("allow", None),
        ("call", "t1", {"n": 1}, True),
    ]:
        lab.run(op)
    assert lab.executed == lab.expected == ["t0", "relay", "t1"]
