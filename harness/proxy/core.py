"""The proxy's decisions, sans I/O: fed parsed messages, it says what to send each side.

:class:`ProxyCore` sits between one client and one upstream server. A transport feeds it
what each side sent (:meth:`~ProxyCore.from_client`, :meth:`~ProxyCore.from_upstream`),
what went wrong with the upstream (:meth:`~ProxyCore.upstream_garbage`,
:meth:`~ProxyCore.upstream_gone`, :meth:`~ProxyCore.request_failed`) and the passing of
time (:meth:`~ProxyCore.due`); each returns an :class:`Out`: messages for the client (each
with the id of the client request it belongs to, for an HTTP front to route), messages for
the upstream, warning lines, and whether to end the upstream as a crash would. Nothing here
reads a pipe, a socket or a clock of its own (``clock`` is passed in).

The rules, in the order a message meets them:

1. **Pass-through.** Every message is forwarded as it came (ids, ``_meta``, progress,
   cancellation, server-to-client requests and their answers, both eras) unless a rule
   below changes it. The proxy's own requests carry ids ``harness-proxy-N``.
2. **The tool list** the client sees: a tool an ``add_tool`` event holds back, or one a
   ``remove_tool`` event took away, is left out of ``tools/list`` and a call to it gets
   -32601; a revoked tool stays listed and a call gets -32600; a ``change_schema`` event
   renames arguments in the listing, translates calls back, and answers a call in the old
   shape with the validation error a server gives (isError from 2025-11-25, else -32602).
   With events that notify, ``initialize``/``server/discover`` results say
   ``tools.listChanged: true``. An event fires once enough requests (``at_step``) or tool
   calls (``at_call``) have been answered: ``notifications/tools/list_changed`` to a
   handshake-era client, or on each stateless listen stream that asked for tool changes.
3. **Faults** (:mod:`harness.proxy.plan`): a raising kind answers from the proxy and the
   call never reaches the server (``timeout`` first holds it for the upstream timeout);
   ``silent`` and ``silent_noop`` answer a lookalike success; ``post_commit`` and the
   kinds that corrupt content (``stale``, ``wrong_units``, ``partial``, ``malformed``)
   let the call through and rewrite its successful result.
4. **The strategy** decides how a tool failure reaches the client, a fault's and a real
   ``isError`` alike (:data:`~harness.protocol.strategies.TOOL_ERROR_STRATEGIES` for a
   fault): ``is_error`` passes a real one through, ``masked`` hides its text, ``collapse``
   makes it -32603 with the reason, ``escape`` ends the upstream, ``input_required`` asks a
   client that declared elicitation for the argument the failure names (mid-call in the
   handshake era, an InputRequiredResult in the stateless era) and tries again with the
   answer. A JSON-RPC error from the server is kept as it is.
5. **No client waits forever.** A request the upstream has not answered after ``timeout``
   seconds, every request in flight when the upstream dies (and every later one), and a
   request in flight when the upstream writes garbage (after ``grace`` seconds without a
   good answer) get -32603 with a message saying which, once each.

6. **Stop.** :meth:`~ProxyCore.stop` answers every client request still waiting (sent
   upstream, held by a fault, waiting for the tool list or for the client's own answer to a
   question) with -32603 saying the proxy stopped, so that no id goes unanswered.

Everything that happens is recorded through ``record`` as JSONL in the sessions' trace
format: ``c2s``/``s2c`` lines are the client's side of the wire, ``p2u``/``u2p`` the
upstream's, ``harness`` lines the faults, rewrites, events and upstream trouble, each with
``step`` (client requests so far). A message passed on unchanged is written once: its
``p2u`` (or ``s2c``) line is ``{"dir":"p2u","same":"c2s"}``, the message of the last ``c2s``
(``u2p``) line. No wall-clock value is written, so the same calls through the same seed and
server give the same bytes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.faults.kinds import FAULT_KIND_TABLE, FaultRule, InjectedFault, ToolFault
from harness.protocol.codecs import compact_text
from harness.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RPCError,
)
from harness.protocol.inputs import ELICIT, json_digest
from harness.protocol.messages import (
    TOOLS_LIST_CHANGED,
    Message,
    RequestId,
    check_envelope,
    error_response,
    is_response,
    is_valid_id,
    notification,
    reply_id,
)
from harness.protocol.request_state import RequestStateSealer
from harness.protocol.stateless import CANCELLED, LISTEN, SERVER_INFO, SUBSCRIPTION_ID
from harness.protocol.strategies import ASKING_STRATEGIES, STRATEGIES, TOOL_ERROR_STRATEGIES, ToolEscape
from harness.protocol.tools import Tool
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    SEP_1303_VERSION,
    SUPPORTED_VERSIONS,
    at_least,
)
from harness.proxy.plan import (
    Checked,
    Plan,
    ProxyEvent,
    ProxyFaultEngine,
    as_catalogue_tool,
    build_engine,
    properties,
    renames_of,
)
from harness.proxy.rewrite import (
    CORRUPTING_KINDS,
    corrupt,
    lookalike,
    masked,
    question_schema,
    reason_of,
    rejected_argument,
    renamed_schema,
)
from harness.sim.catalogue import CatalogueTool

JSON = dict[str, Any]
Record = Callable[[bytes], None]

OWN_ID_PREFIX = "harness-proxy-"
"""The ids of the proxy's own requests (a tools/list of its own, an elicitation it asks)."""
DEFAULT_TIMEOUT = 30.0
DEFAULT_GRACE = 1.0
"""Seconds a request in flight may still get a good answer after the upstream wrote garbage."""
DEFAULT_MAX_SESSIONS = 64
"""HTTP front: live upstream sessions held at once; past it a new session is refused, no process started."""
SILENT_KINDS: frozenset[str] = frozenset({"silent", "silent_noop"})
STOP_AT_END = "end of input"
"""Why a proxy stops when its client closed the connection: the ordinary end, not noted in the trace
unless a request was still waiting."""

_dumps = compact_text


def _obj(value: Any) -> JSON:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def wire_line(direction: str, message: Any) -> bytes:
    """One trace line for a message: ``{"dir":...,"msg":...}``."""
    return b'{"dir":"' + direction.encode() + b'","msg":' + _dumps(message).encode() + b"}\n"


SAME_AS: dict[str, str] = {"p2u": "c2s", "s2c": "u2p"}
"""The line a message sent on unchanged refers to instead of being written again."""


def same_line(direction: str) -> bytes:
    """The trace line of a message passed on unchanged: ``{"dir":"p2u","same":"c2s"}``."""
    return b'{"dir":"' + direction.encode() + b'","same":"' + SAME_AS[direction].encode() + b'"}\n'


@dataclass
class Out:
    """What one input makes the proxy do."""

    to_client: list[tuple[Message, RequestId | None]] = field(default_factory=list)
    """Messages for the client, each with the client request it belongs to (None: none)."""
    to_upstream: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """One line each for stderr."""
    crash: bool = False
    """End the upstream as a crash would (``escape``)."""

    def extend(self, other: Out) -> None:
        self.to_client += other.to_client
        self.to_upstream += other.to_upstream
        self.warnings += other.warnings
        self.crash = self.crash or other.crash


@dataclass
class Call:
    """One ``tools/call`` from the client, as the proxy handles it."""

    client_id: RequestId
    name: str
    arguments: JSON
    """As the client sent them."""
    forwarded: JSON
    """Under the real tool's argument names (a ``change_schema`` renames them back)."""
    index: int
    """1-based: which call of this tool it is."""
    params: JSON
    stateless: bool
    rule: FaultRule | None = None
    """A fault that acts on the real result (post_commit, a content kind)."""
    asked: bool = False


@dataclass
class Pending:
    """A request sent upstream and not yet answered."""

    upstream_id: RequestId
    client_id: RequestId | None
    """None: the proxy's own request."""
    method: str
    deadline: float | None
    call: Call | None = None
    progress: Any = None
    why: str = "timeout"
    """What its deadline means: ``timeout`` or ``garbage``."""


@dataclass
class Ask:
    """A question the proxy asked the client instead of failing a call (``input_required``)."""

    call: Call
    argument: str
    origin: str
    """``fault`` (an asking fault kind) or ``real`` (the server's isError named the argument)."""
    fallback: Message
    """The call's reply if the client does not answer with a value."""
    key: str
    deadline: float | None = None


@dataclass
class Held:
    """A call a ``timeout`` fault holds until ``due``."""

    call: Call
    rule: FaultRule
    tool: CatalogueTool
    due: float


class ProxyCore:
    """The decisions of one proxied connection (see the module docstring)."""

    def __init__(
        self,
        *,
        strategy: str = "is_error",
        plan: Plan | None = None,
        seed: int = 0,
        timeout: float | None = DEFAULT_TIMEOUT,
        grace: float = DEFAULT_GRACE,
        clock: Callable[[], float],
        record: Record | None = None,
        warned: set[str] | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        self.strategy = strategy
        self.plan = plan
        self.seed = seed
        self.timeout = timeout
        self.grace = grace
        self.clock = clock
        self.record = record
        self.warned = warned if warned is not None else set()
        """Warning lines already printed (shared by the connections of one proxy)."""
        self.engine: ProxyFaultEngine = build_engine(plan, seed, timeout or DEFAULT_TIMEOUT)
        self._start = clock()
        self.sealer = RequestStateSealer(hashlib.sha256(f"harness-proxy:{seed}".encode()).digest())
        self.tools: dict[str, JSON] = {}
        """The real server's tools as its tools/list said (name -> descriptor)."""
        self.tools_known = False
        self.checked: Checked | None = None
        self._catalogue_tools: dict[str, CatalogueTool] = {}
        self._listing = False
        self._listed = False
        self._wants_tools = plan is not None or strategy in ASKING_STRATEGIES
        """Whether the proxy needs the real tools before a call (to check the plan, to ask for input)."""
        self._hold: list[tuple[Callable[[Out], None], Any, bool]] = []
        """Client messages waiting while the proxy lists the tools, in order: how to go on with
        each, the message, and whether it is a call already read (counted, in the trace)."""
        self._received: dict[str, Any] = {"c2s": None, "u2p": None}
        """The last message read from each side: sent on as it is, it is not written again."""
        self._listing_meta: Any = None
        self.pending: dict[RequestId, Pending] = {}
        self._held: dict[RequestId, Held] = {}
        self._asks: dict[RequestId, Ask] = {}
        self._issued: dict[str, Ask] = {}
        self._own = 0
        self.counts: dict[str, int] = {}
        self.requests = 0
        self.answered = 0
        self.answered_calls = 0
        self.calls = 0
        self.held_back: set[str] = {e.tool for e in (plan.events if plan else ()) if e.kind == "add_tool"}
        self.removed: set[str] = set()
        self.revoked: set[str] = set()
        self.changed: dict[str, dict[str, str]] = {}
        """Tool -> renames (old -> new) the client sees."""
        self._events_done: set[int] = set()
        self.initialized = False
        self.client_capabilities: JSON = {}
        self.version: str | None = None
        self.listens: dict[RequestId, bool] = {}
        """Open stateless listen streams (request id -> asked for tool-list changes)."""
        self.server_info: Any = None
        self.dead: str | None = None
        self._last: dict[str, JSON] = {}
        self.stats: dict[str, Counter[str]] = {
            "faults": Counter(),
            "rewrites": Counter(),
            "events": Counter(),
            "upstream": Counter(),
            "asks": Counter(),
        }

    # -- recording ----------------------------------------------------------------------------

    def _wire(self, direction: str, message: Any) -> None:
        if self.record is not None:
            if direction in SAME_AS:
                if message is self._received[SAME_AS[direction]]:
                    self.record(same_line(direction))
                    return
            else:
                self._received[direction] = message
            self.record(wire_line(direction, message))

    def _note(self, **fields: Any) -> None:
        if self.record is not None:
            self.record(_dumps({"dir": "harness", "step": self.requests, **fields}).encode() + b"\n")

    def _warn(self, out: Out, line: str, *, once: str | None = None) -> None:
        """A warning line for stderr, printed once per text (or once per ``once`` key)."""
        self._note(warning=line)
        key = line if once is None else f"\0{once}"
        if key not in self.warned:
            self.warned.add(key)
            out.warnings.append(line)

    def now(self) -> float:
        """Seconds since this connection started (the fault engine's clock)."""
        return self.clock() - self._start

    def _deadline(self) -> float | None:
        return None if not self.timeout else self.now() + self.timeout

    # -- sending ------------------------------------------------------------------------------------

    def _to_client(self, out: Out, message: Message, related: RequestId | None) -> None:
        self._wire("s2c", message)
        out.to_client.append((message, related))

    def _to_upstream(self, out: Out, message: Message) -> None:
        self._wire("p2u", message)
        out.to_upstream.append(message)

    def _answer(self, out: Out, reply: Message, *, call: bool = False) -> None:
        """A reply to a client request; then the events its answer may set off."""
        self._to_client(out, reply, reply.get("id"))
        self.answered += 1
        if call:
            self.answered_calls += 1
        self._fire_events(out)

    def _error(
        self,
        out: Out,
        rid: RequestId | None,
        code: int,
        message: str,
        data: Any = None,
        *,
        call: bool = False,
    ) -> None:
        self._answer(out, error_response(rid, code, message, data), call=call)

    def _own_id(self) -> str:
        self._own += 1
        return f"{OWN_ID_PREFIX}{self._own}"

    def _forward(self, out: Out, message: Message, *, call: Call | None = None, timed: bool = True) -> None:
        """Send a client request upstream as it is, and wait for its answer."""
        rid = message["id"]
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        progress = meta.get("progressToken") if isinstance(meta, dict) else None
        self.pending[rid] = Pending(
            rid, rid, message["method"], self._deadline() if timed else None, call, progress
        )
        self._to_upstream(out, message)

    # -- from the client --------------------------------------------------------------------------

    def from_client(self, message: Any) -> Out:
        """A message the client sent (parsed JSON of any shape)."""
        out = Out()
        if self._listing:
            self._hold.append((lambda later: self._client(later, message), message, False))
            return out
        self._client(out, message)
        return out

    def client_unparseable(self, text: str, why: str) -> Out:
        """The client sent bytes that are not JSON: -32700, as a server answers them."""
        out = Out()
        self._note(client={"unparseable": text[:200]})
        self._to_client(out, error_response(None, PARSE_ERROR, f"parse error: {why}"), None)
        return out

    def client_oversized(self, limit: int) -> Out:
        """The client sent a line longer than ``limit`` bytes: it was read past, never held, and gets
        -32600 with id null, as a server answers one (harness.transports.stdio)."""
        out = Out()
        self._note(client={"oversized": limit})
        self._to_client(
            out,
            error_response(None, INVALID_REQUEST, f"message larger than {limit} bytes (--max-message)"),
            None,
        )
        return out

    def _client(self, out: Out, message: Any) -> None:
        self._wire("c2s", message)
        if not isinstance(message, dict):
            self._error(out, None, INVALID_REQUEST, "a JSON-RPC message must be an object")
            return
        if "method" not in message:
            self._client_response(out, message)
            return
        try:
            check_envelope(message)
        except RPCError as exc:
            if "id" in message:
                self.requests += 1
                self._error(out, reply_id(message), exc.code, exc.message)
            elif self.dead is None:
                self._to_upstream(out, message)  # a broken notification: the server's to ignore
            return
        if "id" not in message:
            self._client_notification(out, message)
            return
        self.requests += 1
        method = message["method"]
        if self.dead is not None:
            if method == "tools/call":
                self.calls += 1  # the summary counts every call the client made, a dead server's too
            self._dead_answer(out, message["id"], call=method == "tools/call")
            return
        params = _obj(message.get("params"))
        if method == "initialize":
            caps = params.get("capabilities")
            self.client_capabilities = caps if isinstance(caps, dict) else {}
        elif method == "tools/call":
            self._call(out, message, params)
            return
        elif method == LISTEN:
            wanted = params.get("notifications")
            self.listens[message["id"]] = isinstance(wanted, dict) and wanted.get("toolsListChanged") is True
            self._forward(out, message, timed=False)  # a listen stream stays open as long as it likes
            return
        self._forward(out, message)

    def _client_response(self, out: Out, message: Message) -> None:
        rid = message.get("id")
        if is_valid_id(rid) and rid in self._asks:
            self._answered_ask(out, self._asks.pop(rid), message)
        elif self.dead is None and is_response(message):
            self._to_upstream(out, message)  # the answer to a request the server sent
        elif not is_response(message):
            self._error(out, None, INVALID_REQUEST, "a JSON-RPC message needs a method, a result or an error")

    def _client_notification(self, out: Out, message: Message) -> None:
        method = message["method"]
        params = _obj(message.get("params"))
        if method == CANCELLED:
            self._cancelled(params.get("requestId"))
        if self.dead is not None:
            return
        self._to_upstream(out, message)
        if method == "notifications/initialized":
            self.initialized = True
            if self._wants_tools and not self._listed:
                self._list_tools(out, None)

    def _cancelled(self, rid: Any) -> None:
        """The client gave up on a request: nothing more goes to it about that request."""
        if not is_valid_id(rid):
            return
        self._held.pop(rid, None)
        for key, ask in list(self._asks.items()):
            if ask.call.client_id == rid:
                del self._asks[key]
        for uid, pending in list(self.pending.items()):
            if pending.client_id == rid:
                pending.client_id = None  # a late answer is dropped
                pending.deadline = None
                self.listens.pop(rid, None)
                del self.pending[uid]

    # -- the proxy's own tools/list --------------------------------------------------------------

    def _list_tools(self, out: Out, meta: Any, cursor: Any = None) -> None:
        params: JSON = {}
        if isinstance(meta, dict):
            params["_meta"] = meta
        if cursor is not None:
            params["cursor"] = cursor
        message: Message = {"jsonrpc": "2.0", "id": self._own_id(), "method": "tools/list"}
        if params:
            message["params"] = params
        self._listing = self._listed = True
        self._listing_meta = meta
        self.pending[message["id"]] = Pending(message["id"], None, "tools/list", self._deadline())
        self._to_upstream(out, message)

    def _listed_page(self, out: Out, reply: Message, meta: Any) -> None:
        result = reply.get("result")
        if isinstance(result, dict):
            cursor = self._learn_tools(out, result)
            if cursor is not None:
                self._list_tools(out, meta, cursor)
                return
        self._listing = False
        self._release(out)

    def _release(self, out: Out) -> None:
        while self._hold and not self._listing:
            self._hold.pop(0)[0](out)

    # -- tools/call ---------------------------------------------------------------------------------

    def _call(self, out: Out, message: Message, params: JSON) -> None:
        rid = message["id"]
        name = params.get("name")
        if not isinstance(name, str):
            self._forward(out, message)  # the server's to refuse
            return
        arguments = _obj(params.get("arguments"))
        meta = params.get("_meta")
        stateless = isinstance(meta, dict) and META_PROTOCOL_VERSION in meta
        token = params.get("requestState")
        if isinstance(token, str) and token in self._issued:
            self._continued(out, message, params, name, arguments, token)
            return
        self.calls += 1
        if name in self.held_back or name in self.removed:
            self.stats["rewrites"]["unknown tool"] += 1
            self._error(out, rid, METHOD_NOT_FOUND, f"unknown tool {name!r}", call=True)
            return
        if name in self.revoked:
            self.stats["rewrites"]["not permitted"] += 1
            self._error(out, rid, INVALID_REQUEST, f"tool {name!r} not permitted for this client", call=True)
            return
        if self._wants_tools and not self._listed and not self.tools_known:
            self.calls -= 1  # counted again when it comes back
            self._hold.insert(0, (lambda later: self._call(later, message, params), message, True))
            self._list_tools(out, meta if stateless else None)
            return
        forwarded = arguments
        renames = self.changed.get(name)
        if renames is not None:
            problem = self._stale_shape(name, arguments, renames)
            if problem is not None:
                self.stats["rewrites"]["old schema"] += 1
                self._invalid_arguments(out, rid, name, problem, stateless)
                return
            back = {new: old for old, new in renames.items()}
            forwarded = {back.get(k, k): v for k, v in arguments.items()}
        index = self.counts[name] = self.counts.get(name, 0) + 1
        call = Call(rid, name, arguments, forwarded, index, params, stateless)
        rule = None
        if self.engine.rules:
            rule = self.engine.decide(self._tool(name), forwarded, index, self.now())
        if rule is not None:
            self._fault(out, call, rule)
        elif forwarded is arguments:
            self._forward(out, message, call=call)
        else:
            self._forward(out, self._with_arguments(message, forwarded), call=call)

    @staticmethod
    def _with_arguments(message: Message, arguments: JSON) -> Message:
        return {**message, "params": {**message["params"], "arguments": arguments}}

    def _tool(self, name: str) -> CatalogueTool:
        tool = self._catalogue_tools.get(name)
        if tool is None:
            tool = self._catalogue_tools[name] = as_catalogue_tool(name, self.tools.get(name))
        return tool

    def _stale_shape(self, name: str, arguments: JSON, renames: dict[str, str]) -> str | None:
        """Why a call to a renamed tool does not fit its new schema (the server's words)."""
        schema = renamed_schema(self._tool(name).schema, renames)
        problem = Tool(name, lambda **_: None, schema).argument_problem(arguments)
        if problem is None:
            old = [k for k in arguments if k in renames]
            if old:
                problem = f"unknown argument {old[0]!r}"
        return problem

    def _invalid_arguments(self, out: Out, rid: RequestId, name: str, problem: str, stateless: bool) -> None:
        text = f"invalid arguments for tool {name!r}: {problem}"
        if stateless or self.version is None or at_least(self.version, SEP_1303_VERSION):
            result = {"content": [{"type": "text", "text": f"ERROR: {text}"}], "isError": True}
            self._answer(
                out, {"jsonrpc": "2.0", "id": rid, "result": self._made(result, stateless)}, call=True
            )
        else:
            self._error(out, rid, INVALID_PARAMS, text, call=True)

    def _made(self, result: JSON, stateless: bool) -> JSON:
        """A result the proxy makes, dressed for the era (resultType and serverInfo when stateless)."""
        if not stateless:
            return result
        out = {**result, "resultType": "complete"}
        if self.server_info is not None:
            out["_meta"] = {SERVER_INFO: self.server_info}
        return out

    # -- faults -------------------------------------------------------------------------------------

    def _fault(self, out: Out, call: Call, rule: FaultRule) -> None:
        kind = FAULT_KIND_TABLE[rule.kind]
        fault = InjectedFault(rule.kind, call.name, call.index, rule.index, rule.explicit, self.requests, 0.0)
        self._note(fault=fault.to_json(), id=call.client_id)
        self.stats["faults"][rule.kind] += 1
        tool = self._tool(call.name)
        if rule.kind in SILENT_KINDS:
            result = self._made(lookalike(self._last.get(call.name)), call.stateless)
            self._answer(out, {"jsonrpc": "2.0", "id": call.client_id, "result": result}, call=True)
            return
        if kind.commits or rule.kind in CORRUPTING_KINDS:
            call.rule = rule
            self._forward(out, self._call_message(call, call.client_id), call=call)
            return
        if kind.drifts:
            renames = {base: new for new, base in tool.variants[rule.variant].renames.items()}
            self.changed[call.name] = renames
            self._note(drift={"tool": call.name, "variant": rule.variant})
        if kind.hangs and self.timeout:
            self._held[call.client_id] = Held(call, rule, tool, self.now() + self.timeout)
            return
        self._fail(out, call, rule, tool)

    def _call_message(self, call: Call, rid: RequestId) -> Message:
        params = {**call.params, "arguments": call.forwarded}
        params.pop("inputResponses", None)
        params.pop("requestState", None)
        return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}

    def _fail(self, out: Out, call: Call, rule: FaultRule, tool: CatalogueTool) -> None:
        """A raising fault's failure, encoded by the strategy (or asked about)."""
        kind = FAULT_KIND_TABLE[rule.kind]
        text = self.engine.text(rule, tool, call.forwarded, self.now())
        failure = ToolFault(rule.kind, text, rule.argument if kind.asks else None)
        if failure.argument is not None and self.strategy in ASKING_STRATEGIES and self._can_ask(call):
            fallback = self._encoded(call, failure, "is_error")
            assert fallback is not None
            self._ask(out, call, failure.argument, text, "fault", fallback)
            return
        reply = self._encoded(call, failure, self.strategy)
        if reply is None:
            self._crash(out, call)
            return
        if self.strategy in ("masked", "collapse"):
            # The strategy decides how an injected failure arrives, as it does for a real one.
            self._note(rewrite={"id": call.client_id, "tool": call.name, "by": self.strategy})
            self.stats["rewrites"][self.strategy] += 1
        self._answer(out, reply, call=True)

    def _encoded(self, call: Call, failure: Exception, strategy: str) -> Message | None:
        """A tool failure as ``strategy`` reports it; None for ``escape`` (the server dies)."""
        try:
            result = TOOL_ERROR_STRATEGIES[strategy](call.name, failure)
        except ToolEscape:
            return None
        except RPCError as exc:
            return error_response(call.client_id, exc.code, exc.message, exc.data)
        return {"jsonrpc": "2.0", "id": call.client_id, "result": self._made(result, call.stateless)}

    # -- asking the client (input_required) ------------------------------------------------------

    def _can_ask(self, call: Call) -> bool:
        if call.asked:
            return False
        if call.stateless:
            meta = call.params.get("_meta")
            caps = meta.get(META_CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
        else:
            caps = self.client_capabilities
        return isinstance(caps, dict) and isinstance(caps.get("elicitation"), dict)

    def _ask(self, out: Out, call: Call, argument: str, text: str, origin: str, fallback: Message) -> None:
        question = {
            "message": text,
            "requestedSchema": question_schema(
                argument, properties(self.tools.get(call.name, {})).get(argument)
            ),
        }
        key = f"{OWN_ID_PREFIX}{argument}"
        self.stats["asks"][origin] += 1
        self._note(ask={"id": call.client_id, "tool": call.name, "argument": argument, "origin": origin})
        if call.stateless:
            request = {"method": ELICIT, "params": question}
            token = self.sealer.seal("tools/call", call.name, call.arguments, {key: json_digest(request)}, {})
            self._issued[token] = Ask(call, argument, origin, fallback, key)
            result = self._made({"inputRequests": {key: request}, "requestState": token}, stateless=True)
            result["resultType"] = "input_required"
            self._answer(out, {"jsonrpc": "2.0", "id": call.client_id, "result": result})
            return
        rid = self._own_id()
        self._asks[rid] = Ask(call, argument, origin, fallback, key, self._deadline())
        self._to_client(
            out, {"jsonrpc": "2.0", "id": rid, "method": ELICIT, "params": question}, call.client_id
        )

    @staticmethod
    def _value(answer: Any, argument: str) -> Any:
        if not isinstance(answer, dict) or answer.get("action") != "accept":
            return None
        content = answer.get("content")
        return content.get(argument) if isinstance(content, dict) else None

    def _answered_ask(self, out: Out, ask: Ask, message: Message) -> None:
        value = self._value(message.get("result"), ask.argument)
        self._go_on(out, ask, ask.call, value, fresh_id=ask.origin == "real")

    def _continued(
        self, out: Out, message: Message, params: JSON, name: str, arguments: JSON, token: str
    ) -> None:
        """A stateless call retried with the answer to the proxy's question (MRTR)."""
        ask = self._issued.pop(token)
        try:
            self.sealer.open(token, "tools/call", name, arguments)
        except RPCError as exc:
            self._error(out, message["id"], exc.code, exc.message, exc.data)
            return
        responses = params.get("inputResponses")
        answer = responses.get(ask.key) if isinstance(responses, dict) else None
        call = Call(
            message["id"], name, arguments, ask.call.forwarded, ask.call.index, params, True, asked=True
        )
        self._go_on(out, ask, call, self._value(answer, ask.argument), fresh_id=False)

    def _go_on(self, out: Out, ask: Ask, call: Call, value: Any, *, fresh_id: bool) -> None:
        """The client answered (or not): try the call again with its value, or answer the fallback."""
        call.asked = True
        if value is None:
            self.stats["asks"]["declined"] += 1
            self._answer(out, {**ask.fallback, "id": call.client_id}, call=True)
            return
        self.stats["asks"]["answered"] += 1
        call.forwarded = {**call.forwarded, ask.argument: value}
        if ask.origin == "fault":
            rule = self.engine.decide(self._tool(call.name), call.forwarded, call.index, self.now())
            if rule is not None:
                self._fail(out, call, rule, self._tool(call.name))
                return
        rid: RequestId = self._own_id() if fresh_id else call.client_id
        message = self._call_message(call, rid)
        self.pending[rid] = Pending(rid, call.client_id, "tools/call", self._deadline(), call)
        self._to_upstream(out, message)

    # -- from the upstream ----------------------------------------------------------------------------

    def from_upstream(self, message: Any) -> Out:
        """A message the upstream sent (parsed JSON of any shape)."""
        out = Out()
        self._wire("u2p", message)
        if not isinstance(message, dict):
            self._garbage(out, _dumps(message))
            return out
        if "method" in message:
            self._to_client(out, message, self._related(message))
            if message.get("method") == "notifications/progress":
                params = _obj(message.get("params"))
                for waiting in self.pending.values():
                    if waiting.progress is not None and waiting.progress == params.get("progressToken"):
                        waiting.deadline = self._deadline()  # progress resets the clock
            return out
        uid = message.get("id")
        pending = self.pending.pop(uid, None) if isinstance(uid, int | str) else None
        if pending is None:
            self._note(upstream={"late": message.get("id")})
            return out
        if pending.client_id is None:
            self._listed_page(out, message, self._listing_meta)
            return out
        reply = message if pending.client_id == pending.upstream_id else {**message, "id": pending.client_id}
        result = reply.get("result")
        if pending.call is not None:
            self._call_reply(out, pending.call, reply)
            return out
        if isinstance(result, dict):
            reply = self._client_view(out, pending.method, reply, result)
        if pending.method == LISTEN:
            self.listens.pop(pending.client_id, None)
        self._answer(out, reply)
        return out

    def _related(self, message: Message) -> RequestId | None:
        """The client request a message from the upstream belongs to, for an HTTP front."""
        params = _obj(message.get("params"))
        meta = _obj(params.get("_meta"))
        if SUBSCRIPTION_ID in meta and meta[SUBSCRIPTION_ID] in self.listens:
            subscription: RequestId = meta[SUBSCRIPTION_ID]
            return subscription
        token = params.get("progressToken")
        if token is not None:
            for pending in self.pending.values():
                if pending.progress == token:
                    return pending.client_id
        calls = [p.client_id for p in self.pending.values() if p.client_id is not None and p.method != LISTEN]
        return calls[0] if len(calls) == 1 else None

    def _client_view(self, out: Out, method: str, reply: Message, result: JSON) -> Message:
        """A result as the client gets it: the tool list the events make, listChanged declared."""
        if method == "initialize":
            version = result.get("protocolVersion")
            self.version = version if isinstance(version, str) and version in SUPPORTED_VERSIONS else None
            self.server_info = result.get("serverInfo")
        elif method == "server/discover":
            meta = result.get("_meta")
            if isinstance(meta, dict) and SERVER_INFO in meta:
                self.server_info = meta[SERVER_INFO]
        if method in ("initialize", "server/discover") and self.plan is not None and self.plan.notifies:
            caps = result.get("capabilities")
            tools = caps.get("tools") if isinstance(caps, dict) else None
            if isinstance(caps, dict) and not (isinstance(tools, dict) and tools.get("listChanged") is True):
                changed = {
                    **result,
                    "capabilities": {**caps, "tools": {**(tools or {}), "listChanged": True}},
                }
                self.stats["rewrites"]["listChanged"] += 1
                self._note(rewrite={"id": reply.get("id"), "by": "listChanged"})
                return {**reply, "result": changed}
        if method == "tools/list":
            self._learn_tools(out, result)
            shown = self._shown_tools(result)
            if shown is not result:
                self._note(rewrite={"id": reply.get("id"), "by": "tools/list"})
                return {**reply, "result": shown}
        return reply

    def _learn_tools(self, out: Out, result: JSON) -> Any:
        """Keep a tools/list page's descriptors; the next cursor, if any. Check the plan once all are in."""
        for tool in result.get("tools") or ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tools[tool["name"]] = tool
                self._catalogue_tools.pop(tool["name"], None)
        cursor = result.get("nextCursor")
        if cursor is None and not self.tools_known:
            self.tools_known = True
            if self.plan is not None:
                self._check_plan(out)
        return cursor

    def _check_plan(self, out: Out) -> None:
        assert self.plan is not None
        self.checked = self.plan.check(self.tools)
        self.engine.switch_off(self.checked.rules_off)
        for line in self.checked.warnings:
            self._warn(out, line)

    def _shown_tools(self, result: JSON) -> JSON:
        tools = result.get("tools")
        if not isinstance(tools, list):
            return result
        hidden = self.held_back | self.removed
        shown: list[Any] = []
        touched = False
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if name in hidden:
                touched = True
                continue
            renames = self.changed.get(name) if isinstance(name, str) else None
            if renames is not None and isinstance(tool, dict):
                schema = _obj(tool.get("inputSchema"))
                tool = {**tool, "inputSchema": renamed_schema(schema, renames)}
                touched = True
            shown.append(tool)
        return {**result, "tools": shown} if touched else result

    def _call_reply(self, out: Out, call: Call, reply: Message) -> None:
        result = reply.get("result")
        if not isinstance(result, dict):
            self._answer(out, reply, call=True)  # a JSON-RPC error from the server is kept
            return
        failed = result.get("isError") is True
        if call.rule is not None and not failed and result.get("resultType", "complete") == "complete":
            rule, call.rule = call.rule, None
            if FAULT_KIND_TABLE[rule.kind].commits:
                self._note(rewrite={"id": call.client_id, "tool": call.name, "by": rule.kind})
                self.stats["rewrites"][rule.kind] += 1
                self._fail(out, call, rule, self._tool(call.name))
                return
            self._note(rewrite={"id": call.client_id, "tool": call.name, "by": rule.kind})
            self.stats["rewrites"][rule.kind] += 1
            self._answer(out, {**reply, "result": corrupt(result, rule, call.name, call.index)}, call=True)
            return
        if not failed:
            if result.get("resultType", "complete") == "complete":
                self._last[call.name] = result
                self._answer(out, reply, call=True)
            else:
                self._answer(out, reply)  # an upstream's own InputRequiredResult: the call goes on
            return
        self._real_failure(out, call, reply, result)

    def _real_failure(self, out: Out, call: Call, reply: Message, result: JSON) -> None:
        """A real isError, as the strategy reports it."""
        strategy = self.strategy
        if strategy == "is_error":
            self._answer(out, reply, call=True)
            return
        if strategy in ASKING_STRATEGIES:
            argument = rejected_argument(
                reason_of(result, call.name), properties(self.tools.get(call.name, {}))
            )
            if argument is not None and self._can_ask(call):
                self._ask(out, call, argument, reason_of(result, call.name), "real", reply)
            else:
                self._answer(out, reply, call=True)
            return
        self._note(rewrite={"id": call.client_id, "tool": call.name, "by": strategy})
        self.stats["rewrites"][strategy] += 1
        if strategy == "masked":
            self._answer(out, {**reply, "result": masked(result, call.name)}, call=True)
        elif strategy == "collapse":
            self._error(out, call.client_id, INTERNAL_ERROR, reason_of(result, call.name), call=True)
        else:
            self._crash(out, call)

    # -- the upstream in trouble -----------------------------------------------------------------------

    def _crash(self, out: Out, call: Call) -> None:
        out.crash = True
        self._note(crash={"id": call.client_id, "tool": call.name})
        self.stats["upstream"]["crashed"] += 1
        reason = f"crashed: the failure of tool {call.name!r} ended the server (strategy escape)"
        self._die(out, reason)
        self._dead_answer(out, call.client_id, call=True)

    def _dead_answer(self, out: Out, rid: RequestId, *, call: bool = False) -> None:
        self._answer(
            out,
            error_response(rid, INTERNAL_ERROR, f"the upstream server {self.dead}", {"upstream": "gone"}),
            call=call,
        )

    def _die(self, out: Out, reason: str) -> None:
        if self.dead is not None:
            return
        self.dead = reason
        self._note(upstream={"gone": reason})
        self._warn(out, f"upstream {reason}")
        waiting = [p for p in self.pending.values() if p.client_id is not None]
        self.pending.clear()
        self._listing = False
        for pending in waiting:
            assert pending.client_id is not None
            self._dead_answer(out, pending.client_id, call=pending.call is not None)
        for rid in list(self._held):
            del self._held[rid]
            self._dead_answer(out, rid, call=True)
        self._release(out)

    def upstream_gone(self, reason: str) -> Out:
        """The upstream ended (exited, closed its output); ``reason`` says how."""
        out = Out()
        if self.dead is None:
            self.stats["upstream"]["gone"] += 1
        self._die(out, reason)
        return out

    def upstream_garbage(self, line: bytes | str) -> Out:
        """The upstream wrote something that is not a JSON-RPC message."""
        out = Out()
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        self._garbage(out, text)
        return out

    def upstream_oversized(self, limit: int) -> Out:
        """The upstream wrote a message longer than ``limit`` bytes; it was read past, never held.
        As with garbage, the requests in flight get -32603 unless answered within the grace, and
        their error says the answer was too large."""
        out = Out()
        self.stats["upstream"]["oversized"] += 1
        self._note(upstream={"oversized": limit})
        self._warn(
            out,
            f"upstream wrote a message larger than {limit} bytes (--max-message); it was dropped unread "
            f"(requests in flight get -32603 unless answered within {self.grace:g} s)",
            once="oversized",
        )
        self._fail_in_flight(f"oversized:{limit}")
        return out

    def _garbage(self, out: Out, text: str) -> None:
        self.stats["upstream"]["garbage"] += 1
        self._note(upstream={"garbage": text[:200]})
        self._warn(
            out,
            f"upstream wrote something that is not JSON-RPC: {text[:80]!r} "
            f"(requests in flight get -32603 unless answered within {self.grace:g} s)",
            once="garbage",
        )
        self._fail_in_flight("garbage")

    def _fail_in_flight(self, why: str) -> None:
        limit = self.now() + self.grace
        for pending in self.pending.values():
            if pending.client_id is not None:
                pending.why = why
                if pending.deadline is None or pending.deadline > limit:
                    pending.deadline = limit

    def request_failed(self, upstream_id: RequestId, reason: str) -> Out:
        """The link could not deliver one request or read its answer (an HTTP upstream)."""
        out = Out()
        pending = self.pending.pop(upstream_id, None)
        if pending is None:
            return out
        self.stats["upstream"]["failed"] += 1
        self._note(upstream={"failed": reason, "id": upstream_id})
        self._warn(out, f"upstream request failed: {reason}", once="failed")
        if pending.client_id is None:
            self._listing = False
            self._release(out)
            return out
        self._answer(
            out,
            error_response(
                pending.client_id,
                INTERNAL_ERROR,
                f"the upstream server failed: {reason}",
                {"upstream": "failed"},
            ),
            call=pending.call is not None,
        )
        return out

    # -- time ------------------------------------------------------------------------------------------

    def busy(self) -> bool:
        """Whether a client request still waits for its answer (or a message for the tool list)."""
        return bool(
            self._hold
            or self._held
            or self._asks
            or any(p.client_id is not None for p in self.pending.values() if p.method != LISTEN)
        )

    def next_due(self) -> float | None:
        """When :meth:`due` next has something to do (seconds on this core's clock), or None."""
        times = [p.deadline for p in self.pending.values() if p.deadline is not None]
        times += [h.due for h in self._held.values()]
        times += [a.deadline for a in self._asks.values() if a.deadline is not None]
        return min(times) if times else None

    def due(self) -> Out:
        """Answer whatever has waited too long: upstream timeouts, held calls, unanswered questions."""
        out = Out()
        now = self.now()
        for uid, pending in list(self.pending.items()):
            if pending.deadline is None or pending.deadline > now:
                continue
            del self.pending[uid]
            self._expired(out, pending)
        for rid, held in list(self._held.items()):
            if held.due <= now:
                del self._held[rid]
                self._fail(out, held.call, held.rule, held.tool)
        for rid, ask in list(self._asks.items()):
            if ask.deadline is not None and ask.deadline <= now:
                del self._asks[rid]
                self._note(upstream={"unanswered": rid})
                self._go_on(out, ask, ask.call, None, fresh_id=False)
        return out

    def _expired(self, out: Out, pending: Pending) -> None:
        self.stats["upstream"][pending.why] += 1
        self._note(upstream={pending.why: pending.upstream_id})
        if self.dead is None:
            self._to_upstream(
                out,
                notification(
                    CANCELLED, {"requestId": pending.upstream_id, "reason": "timed out at the proxy"}
                ),
            )
        if pending.client_id is None:
            self._warn(out, f"the upstream did not answer the proxy's tools/list within {self.timeout:g} s")
            self._listing = False
            self._release(out)
            return
        if pending.why == "garbage":
            message = "the upstream server answered with something that is not JSON-RPC"
        elif pending.why.startswith("oversized:"):
            size = pending.why.removeprefix("oversized:")
            message = f"the upstream server answered with a message larger than {size} bytes (--max-message)"
        else:
            message = f"the upstream server did not answer within {self.timeout:g} s"
            self._warn(
                out,
                f"upstream did not answer {pending.method} within {self.timeout:g} s "
                "(the client got -32603; later timeouts are counted in the summary)",
                once="timeout",
            )
        self._answer(
            out,
            error_response(pending.client_id, INTERNAL_ERROR, message, {"upstream": pending.why}),
            call=pending.call is not None,
        )

    # -- events ----------------------------------------------------------------------------------------

    def _fire_events(self, out: Out) -> None:
        if self.plan is None:
            return
        off = self.checked.events_off if self.checked is not None else set()
        for event in self.plan.events:
            if event.index in self._events_done or event.index in off:
                continue
            if (event.at_call is not None and self.answered_calls >= event.at_call) or (
                event.at_step is not None and self.answered >= event.at_step
            ):
                self._events_done.add(event.index)
                self._apply(out, event)

    def _apply(self, out: Out, event: ProxyEvent) -> None:
        self.stats["events"][event.kind] += 1
        self._note(event=event.to_json())
        if event.kind == "add_tool":
            self.held_back.discard(event.tool)
        elif event.kind == "remove_tool":
            self.removed.add(event.tool)
        elif event.kind == "revoke":
            self.revoked.add(event.tool)
        else:
            renames = (self.checked.renames if self.checked is not None else {}).get(event.index)
            self.changed[event.tool] = renames if renames is not None else renames_of(event)
        if event.notify:
            if self.initialized:
                self._to_client(out, notification(TOOLS_LIST_CHANGED), None)
            for rid, wants in self.listens.items():
                if wants:
                    note = notification(TOOLS_LIST_CHANGED, {"_meta": {SUBSCRIPTION_ID: rid}})
                    self._to_client(out, note, rid)

    # -- the record ------------------------------------------------------------------------------------

    def summary(self) -> JSON:
        """What happened on this connection: requests, calls, faults, rewrites, events, trouble."""
        return {
            "requests": self.requests,
            "calls": self.calls,
            "faults": dict(sorted(self.stats["faults"].items())),
            "rewrites": dict(sorted(self.stats["rewrites"].items())),
            "events": dict(sorted(self.stats["events"].items())),
            "asks": dict(sorted(self.stats["asks"].items())),
            "upstream": dict(sorted(self.stats["upstream"].items())),
        }

    def stop(self, why: str) -> Out:
        """The proxy is stopping (``why``: ``end of input``, ``SIGTERM``, ``client gone``...):
        every client request still waiting gets -32603 saying so, once; nothing is sent upstream."""
        out = Out()
        waiting: list[tuple[RequestId, bool]] = []
        for _, message, read in self._hold:
            if read:
                self.calls += 1  # it was uncounted while it waited for the tool list
                waiting.append((message["id"], True))
                continue
            self._wire("c2s", message)
            if (
                isinstance(message, dict)
                and isinstance(message.get("method"), str)
                and is_valid_id(message.get("id"))
            ):
                self.requests += 1
                call = message["method"] == "tools/call"
                self.calls += call
                waiting.append((message["id"], call))
        self._hold.clear()
        self._listing = False
        for pending in self.pending.values():
            if pending.client_id is not None:
                waiting.append((pending.client_id, pending.call is not None))
        self.pending.clear()
        waiting += [(rid, True) for rid in self._held]
        self._held.clear()
        waiting += [(ask.call.client_id, True) for ask in self._asks.values()]
        self._asks.clear()
        if waiting or why != STOP_AT_END:
            self._note(stop={"why": why, "unanswered": [rid for rid, _ in waiting]})
        if waiting:
            self.stats["upstream"]["stopped"] += len(waiting)
        text = f"the proxy stopped ({why}) before the upstream server answered"
        for rid, call in waiting:
            self._to_client(out, error_response(rid, INTERNAL_ERROR, text, {"upstream": "stopped"}), rid)
            self.answered += 1
            self.answered_calls += call
        return out

    def close(self) -> None:
        """Write the summary as the trace's last line."""
        self._note(summary=self.summary())
