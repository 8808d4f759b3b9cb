"""What the benchmarks run: servers, messages, floors and peers, built once per case.

Every measured path has a *floor*: the same request and reply serialized and
parsed with the same codec and nothing else. A path's ratio to its floor says how
much of the JSON round trip's speed the dispatch keeps (1.0 would be free
dispatch). The official SDK is driven in-process, as its docs show
(``Client(server)``), on an event loop held in a background thread, so that one
connection serves many timed calls.

Nothing here times anything; ``tests/benchmarks`` hands these callables to
pytest-benchmark, and :mod:`harness.bench.table` reads what it measured.
"""

from __future__ import annotations

import asyncio
import importlib
import io
import json
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from harness.fixtures.demo import add, build_demo_server
from harness.protocol.client import MCPClient
from harness.protocol.codecs import get_codec
from harness.protocol.lifecycle import GATE_ROWS, OTHER, State
from harness.protocol.memory import InMemoryTransport, Tap
from harness.protocol.messages import Message
from harness.protocol.server import MCPServer
from harness.protocol.versions import LATEST_VERSION

CALL_ADD: Message = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"x": 2, "y": 3}},
}
"""The tools/call every dispatch benchmark sends (the reference lab's ``add``)."""

INITIALIZE: Message = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
INITIALIZED: Message = {"jsonrpc": "2.0", "method": "notifications/initialized"}

TOOL_COUNTS: tuple[int, ...] = (10, 100, 1000)
PAGE_SIZE = 10
"""Paginated tools/list cases list every page of this size, following cursors."""
PAYLOAD_BYTES: tuple[int, ...] = (100, 1_000, 10_000, 100_000, 1_000_000)
DEPTHS: tuple[int, ...] = (1, 8, 32, 128)
"""Nesting depths of the echoed structure (orjson refuses more than 254 levels)."""

Op = Callable[[], object]


def ready(server: MCPServer) -> MCPServer:
    """Take ``server`` through the handshake with plain dicts, so it answers tools/*."""
    server.handle(INITIALIZE)
    server.handle(INITIALIZED)
    if server.state is not State.READY:
        raise RuntimeError("the handshake did not reach READY")
    return server


def demo_server() -> MCPServer:
    """The reference lab, handshake done."""
    return ready(build_demo_server())


def _echo_tool(**kwargs: object) -> str:
    return "ok"


def many_tools_server(count: int, page_size: int | None) -> MCPServer:
    """A ready server with ``count`` tools shaped like the lab's ``add``."""
    server = MCPServer("bench-tools", "0", page_size=page_size)
    schema = {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    for i in range(count):
        server.add_tool(f"tool_{i:04d}", _echo_tool, schema, f"Tool number {i}: adds two integers.")
    return ready(server)


def list_request(cursor: str | None, req_id: int = 3) -> Message:
    message: Message = {"jsonrpc": "2.0", "id": req_id, "method": "tools/list"}
    if cursor is not None:
        message["params"] = {"cursor": cursor}
    return message


def listing_exchange(server: MCPServer) -> list[tuple[Message, Message]]:
    """Every (request, reply) pair of one full tools/list, following cursors."""
    pairs: list[tuple[Message, Message]] = []
    cursor: str | None = None
    while True:
        request = list_request(cursor)
        reply = server.handle(request)
        if reply is None or "result" not in reply:
            raise RuntimeError(f"tools/list failed: {reply!r}")
        pairs.append((request, reply))
        cursor = reply["result"].get("nextCursor")
        if cursor is None:
            return pairs


def list_all(send: Callable[[Message], Message | None]) -> int:
    """List every tool through ``send`` (``server.handle`` or ``transport.send``)."""
    count = 0
    cursor: str | None = None
    while True:
        reply = send(list_request(cursor))
        if reply is None:
            raise RuntimeError("tools/list got no reply")
        result = reply["result"]
        count += len(result["tools"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return count


def initialize_again(server: MCPServer, send: Callable[[Message], Message | None]) -> Op:
    """One initialize per call: the server is put back to NEW first (one attribute store)."""

    def op() -> object:
        server.state = State.NEW
        return send(INITIALIZE)

    return op


def floor(codec: str, pairs: Sequence[tuple[Message, Message]]) -> Op:
    """Serialize and parse each request and reply with ``codec``, and nothing else."""
    c = get_codec(codec)
    encode, decode = c.encode, c.decode
    if len(pairs) == 1:
        ((request, reply),) = pairs

        def one() -> object:
            decode(encode(request))
            return decode(encode(reply))

        return one

    return wire_floor(codec, [message for pair in pairs for message in pair])


def wire_floor(codec: str, messages: Sequence[Message]) -> Op:
    """Serialize and parse every message of a recorded session with ``codec``, and nothing else.

    The floor of a whole session: what its wire traffic costs in the codec alone,
    so a session's ratio to it says what the dispatch, the client and the agent keep.
    """
    c = get_codec(codec)
    encode, decode = c.encode, c.decode

    def op() -> object:
        out: object = None
        for message in messages:
            out = decode(encode(message))
        return out

    return op


def lean_send(codec: str) -> Callable[[Message], Message]:
    """The floor's round trip around a dispatcher that checks nothing: the ceiling for dispatch.

    About the anchors' "30-line lean dispatcher": look the method and the tool up,
    call it, wrap its text. No envelope rules, handshake gate, allow-list, argument
    validation or error strategy. Its ratio to the floor is what dispatch in Python
    can keep at best; the gap between it and the transport row is what those checks cost.
    """
    c = get_codec(codec)
    encode, decode = c.encode, c.decode
    tools: dict[str, Callable[..., str]] = {"add": add}

    def tools_call(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": tools[params["name"]](**params["arguments"])}]}

    methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"tools/call": tools_call}

    def send(message: Message) -> Message:
        request = decode(encode(message))
        result = methods[request["method"]](request["params"])
        reply: Message = decode(encode({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        return reply

    return send


def checked_send(codec: str) -> Callable[[Message], Message]:
    """The lean round trip plus every check the transport's tools/call makes, in one function.

    The other reference point, between ``lean`` and ``transport``: the same decisions
    as ``InMemoryTransport.send`` -> ``MCPServer.handle`` -> ``_call_tool`` for a
    well-formed tools/call (dead-server flag, tap, envelope, handshake gate from
    :mod:`harness.protocol.lifecycle`'s table, method table, tool name, allow-list,
    arguments, the tool's own schema check, the strategy's ``try``, the result-size
    guard, the notification outbox), written out inline with no calls between them.
    It answers only that request and raises on anything else: it is a measurement of
    what the checks cost without the structure around them (functions, modules), not
    a second dispatcher. ``checked`` minus ``lean`` is the price of the checks;
    ``transport`` minus ``checked`` the price of the structure.
    """
    c = get_codec(codec)
    encode, decode = c.encode, c.decode
    server = demo_server()
    tools, gate, methods = server.tools, GATE_ROWS, MCPServer._methods
    id_types, max_bytes = frozenset({int, str}), server.max_result_bytes
    no_params: dict[str, Any] = {}
    crashed: BaseException | None = None
    tap: Tap | None = None
    outbox: list[Message] = []

    def send(message: Message) -> Message:
        if crashed is not None:
            raise RuntimeError("server is dead")
        wire = encode(message)
        if tap is not None:
            tap("c2s", wire)
        request = decode(wire)
        if not (
            type(request) is dict
            and type(request.get("id")) in id_types
            and type(request.get("method")) is str
            and request.get("jsonrpc") == "2.0"
            and type(request.get("params", no_params)) is dict
        ):
            raise ValueError("not a well-formed request")
        method = request["method"]
        row = gate[server.state]
        if (row[method] if method in row else row[OTHER]) is not None or methods.get(method) is None:
            raise ValueError("gated or unknown method")
        params = request.get("params") or {}
        name = params.get("name")
        if not isinstance(name, str):
            raise ValueError("no tool name")
        tool = tools.get(name)
        allowed = server.allowed_tools
        if tool is None or (allowed is not None and name not in allowed):
            raise ValueError("unknown or forbidden tool")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            raise ValueError("arguments are not an object")
        if tool.argument_problem(arguments) is not None:
            raise ValueError("invalid arguments")
        try:
            value = tool.fn(**arguments)
        except Exception:
            raise ValueError("the tool raised") from None
        if not (type(value) is str and len(value) * 4 <= max_bytes):
            raise ValueError("not a small text result")
        reply = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"content": [{"type": "text", "text": value}]},
        }
        if outbox:
            raise ValueError("notifications pending")
        wire = encode(reply)
        if tap is not None:
            tap("s2c", wire)
        parsed: Message = decode(wire)
        return parsed

    return send


def exchange(server: MCPServer, request: Message) -> list[tuple[Message, Message]]:
    """The one (request, reply) pair ``server`` produces for ``request``."""
    reply = server.handle(request)
    if reply is None:
        raise RuntimeError(f"no reply to {request['method']}")
    return [(request, reply)]


# -- payloads ---------------------------------------------------------------------


def payload_server() -> MCPServer:
    """A ready server whose ``blob(size)`` returns ``size`` bytes of text and ``echo`` its input."""
    server = MCPServer("bench-payload", "0")
    texts: dict[int, str] = {}

    def blob(size: int) -> str:
        text = texts.get(size)
        if text is None:
            text = texts[size] = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
        return text

    def echo(data: object) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"echo": data}}

    server.add_tool(
        "blob", blob, {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}
    )
    server.add_tool("echo", echo, {"type": "object", "properties": {"data": {}}, "required": ["data"]})
    return ready(server)


def blob_request(size: int) -> Message:
    return {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "blob", "arguments": {"size": size}},
    }


def nested(depth: int) -> object:
    """A structure ``depth`` objects deep, with a little data at each level."""
    value: object = {"leaf": [1, 2.5, "three", True, None]}
    for level in range(depth - 1):
        value = {"level": level, "name": f"n{level}", "child": value}
    return value


def echo_request(depth: int) -> Message:
    return {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"data": nested(depth)}},
    }


# -- whole sessions ------------------------------------------------------------------


def our_session(codec: str = "json", *, build: bool = False, tap: Tap | None = None) -> Op:
    """Connect, initialize, one tools/call, close.

    Connecting is :meth:`MCPServer.new_session` on a lab built once, as the
    official ``Client(server)`` opens a session on a server built once; with
    ``build`` every session builds the lab too (registers and checks every tool).
    """
    lab = build_demo_server()

    def op() -> object:
        server = build_demo_server() if build else lab.new_session()
        client = MCPClient(InMemoryTransport(server, codec, tap=tap))
        client.initialize()
        result = client.call_tool("add", {"x": 2, "y": 3})
        client.close()
        return result

    return op


def wire_of(session: Callable[[Tap], Op]) -> list[Message]:
    """Every message one run of ``session(tap)`` puts on the wire, in order, as parsed dicts."""
    wires: list[bytes] = []
    session(lambda _direction, data: wires.append(data))()
    return [json.loads(data) for data in wires]


def session_messages() -> list[Message]:
    """The wire messages of one :func:`our_session`."""
    return wire_of(lambda tap: our_session("json", tap=tap))


def client_call(codec: str) -> tuple[Op, MCPClient]:
    """Our client's tools/call over a connected in-memory transport."""
    client = MCPClient(InMemoryTransport(build_demo_server(), codec))
    client.initialize()

    def op() -> object:
        return client.call_tool("add", {"x": 2, "y": 3})

    return op, client


# -- stdio -------------------------------------------------------------------------------

SERVE_DEMO: tuple[str, ...] = (sys.executable, "-m", "harness.cli.main", "serve", "--demo")
"""``harness serve --demo``, run by this interpreter."""


@contextmanager
def stdio_client() -> Iterator[MCPClient]:
    """Our client over :class:`StdioTransport` to ``harness serve --demo``, initialized."""
    from harness.transports.stdio import StdioTransport

    transport = StdioTransport(list(SERVE_DEMO))
    client = MCPClient(transport)
    try:
        client.initialize()
        yield client
    finally:
        client.close()


# -- the official SDK -------------------------------------------------------------------

OFFICIAL_BATCH = 50
"""Calls per timed round against the official SDK (one thread hop per round, not per call)."""


def official_server() -> Any:
    """The lab's ``add`` as an official-SDK ``MCPServer`` (ImportError without ``mcp``)."""
    from mcp.server.mcpserver import MCPServer as SDKServer

    server = SDKServer("bench-official")

    @server.tool()
    def add(x: int, y: int) -> str:
        """Add two integers."""
        return str(x + y)

    return server


class HeldClient:
    """One async MCP client connection held open on an event loop in a thread.

    ``connect()`` returns the async context manager of a client with an async
    ``call_tool(name, arguments)`` (the official SDK's ``Client(server)``,
    FastMCP's ``Client(server)``). ``calls(n)`` runs n tools/call on it and
    returns when all are answered; ``close()`` leaves the context and stops the loop.
    """

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stop = asyncio.Event()
        self._client: Any = None
        ready = threading.Event()

        async def hold() -> None:
            async with connect() as client:
                self._client = client
                ready.set()
                await self._stop.wait()

        self._held = asyncio.run_coroutine_threadsafe(hold(), self._loop)
        if not ready.wait(30):
            raise RuntimeError("the client did not connect")

    def _run(self, coro: Coroutine[Any, Any, object]) -> object:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(60)

    def calls(self, n: int = OFFICIAL_BATCH) -> object:
        async def go() -> object:
            result: object = None
            for _ in range(n):
                result = await self._client.call_tool("add", {"x": 2, "y": 3})
            return result

        return self._run(go())

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._held.result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


def official_client(server: Any, mode: str = "auto") -> HeldClient:
    """The official SDK's in-process ``Client(server)``, held open."""
    from mcp import Client

    return HeldClient(lambda: Client(server, mode=mode))


def fastmcp_client() -> HeldClient:
    """FastMCP's in-memory ``Client(server)`` on the lab's ``add`` (ImportError without fastmcp)."""
    fastmcp: Any = importlib.import_module("fastmcp")
    server = fastmcp.FastMCP("bench-fastmcp")

    def add(x: int, y: int) -> str:
        """Add two integers."""
        return str(x + y)

    server.tool(add)
    return HeldClient(lambda: fastmcp.Client(server))


def official_session(server: Any, runner: asyncio.Runner, mode: str = "auto") -> Op:
    """Connect, initialize (or discover), one tools/call, close: one official session."""
    from mcp import Client

    async def go() -> object:
        async with Client(server, mode=mode) as client:
            return await client.call_tool("add", {"x": 2, "y": 3})

    def op() -> object:
        return runner.run(go())

    return op


# -- scripted sessions and batches (harness.session.simulated, harness.batch.runner) -------------------------


def protocol_session(calls: int, tap: Tap | None = None) -> Op:
    """A scripted session at the protocol level: lab, handshake, tools/list, ``calls`` calls, close.

    Calls alternate between ``add`` and ``weather`` (every fourth asks for a city
    with no station, so a quarter of them fail as tool errors).
    """
    cities = ("Oslo", "Paris", "Lima", "Atlantis")

    def op() -> object:
        client = MCPClient(InMemoryTransport(build_demo_server(), "json", tap=tap))
        client.initialize()
        client.list_tools()
        done = 0
        for i in range(calls):
            if i % 2:
                client.call_tool("weather", {"city": cities[(i // 2) % 4]})
            else:
                client.call_tool("add", {"x": i, "y": 1})
            done += 1
        client.close()
        return done

    return op


def protocol_messages(calls: int) -> list[Message]:
    """The wire messages of one :func:`protocol_session`."""
    return wire_of(lambda tap: protocol_session(calls, tap=tap))


def twenty_call_scenario() -> Any:
    """A scenario whose task is twenty weather lookups with no faults: twenty calls for ``naive``."""
    from harness.scenarios.scenario import parse_scenario

    cities = ("Lima", "Oslo", "Paris", "Tokyo")
    subgoals = [
        {"name": f"lookup_{i:02d}", "tool": "weather", "arguments": {"city": cities[i % 4]}}
        for i in range(20)
    ]
    data = {
        "description": "Twenty weather lookups and nothing else: the cost of a session's machinery.",
        "summary": "twenty calls, no faults",
        "tools": ["weather"],
        "max_steps": 60,
        "task": {"prompt": "Look up the weather twenty times.", "subgoals": subgoals},
    }
    return parse_scenario(data, shown="<bench: twenty calls>")


def scripted_messages(scenario: Any, seed: int = 0, era: str = "handshake") -> list[Message]:
    """Every wire message of one ``naive`` session of ``scenario`` in ``era``, read back from its trace."""
    from harness.session.simulated import run_session

    trace = io.BytesIO()
    result = run_session(scenario, "naive", "is_error", seed, trace=trace, era=era)
    if result.status != "ok":
        raise RuntimeError(f"the session did not run: {result.status} {result.error}")
    records = [json.loads(line) for line in trace.getvalue().splitlines()]
    return [r["msg"] for r in records if r["dir"] in ("c2s", "s2c")]


def batch_grid(sessions: int) -> Any:
    """A grid of about ``sessions`` cells: travel_day x reader x every strategy x seeds."""
    from harness.batch.grid import Grid
    from harness.protocol.strategies import STRATEGIES

    per_seed = len(STRATEGIES)
    seeds = tuple(range(max(1, sessions // per_seed)))
    return Grid(
        scenarios=("travel_day",),
        agents=("reader",),
        strategies=tuple(STRATEGIES),
        hosts=("typical",),
        seeds=seeds,
    )


def peak_rss_kb() -> int:
    """This process's peak resident set size in KiB.

    Linux's ``VmHWM`` belongs to the process image, so it starts afresh at exec;
    ``ru_maxrss`` survives fork and exec, so a child started by a big parent would
    report the parent's peak. ``ru_maxrss`` is the fallback off Linux.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
