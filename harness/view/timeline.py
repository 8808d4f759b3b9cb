"""A session's JSONL trace cut into steps, and the first step where two sessions part ways.

The trace (:mod:`harness.session.trace`) is a flat list of lines: wire messages as they crossed
the transport (``c2s``, ``s2c``, no step on them) and harness notes (``dir: harness``, each
with the step it was written at). :func:`timeline` puts every line under the agent step it
belongs to:

* step 0 is the setup: the handshake (or ``subscriptions/listen``) and the first
  ``tools/list``, up to its last page; what the agent was given at ``reset``;
* a request the client sends after that starts the next step (the agent's action), unless it
  continues the one in hand: a ``tools/call`` that carries ``inputResponses`` or
  ``requestState`` (a multi-round-trip call), a ``tools/list`` page with a ``cursor``, or the
  client's own re-list after a ``notifications/tools/list_changed``;
* a harness note goes under the step it names; a note for a later step starts that step (a
  ``wait``, a ``finish``, a ``give_up`` send nothing on the wire);
* a notification goes with the step it arrived in, as the host adds it to that step's
  observation; one that arrived during the setup rides on step 1's (nothing is pumped before
  the agent first acts).

Each step then says what the agent did (``action``), the request on the wire and its reply,
what the host let the agent see (``seen``: the result's content and ``isError``, or for a
JSON-RPC error the host's view of it, code and message or code alone), the notifications
that came with it, and the faults that fired. ``seen`` is the observation the agent's next
``act`` got, so two sessions of one scenario and seed compare step by step on it
(:func:`first_divergence`).

A stateless-era client may answer a ``tools/list`` from its cache, sending nothing: such a
step leaves no line of its own. The step numbers of the harness notes that follow put the
count right again where they can; a timeline whose count still disagrees with the session's
``end`` note says so (``exact`` false, and ``problems``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

LIST_CHANGED = "notifications/tools/list_changed"

AFTER_CALL = frozenset({"fault", "host", "input", "done", "stored", "out_of_order", "drift", "event"})
"""Harness notes written while or after the step's request is answered (never before it)."""


@dataclass
class Step:
    """One agent step of a session (step 0: the setup)."""

    step: int
    action: dict[str, Any] | None = None
    """What the agent did: ``{"kind": "call", "tool", "arguments"}``, ``list``, ``wait``,
    ``finish``, ``give_up``; ``start`` for step 0; None when nothing says (a cached list)."""
    lines: list[int] = field(default_factory=list)
    """Indexes of the trace lines under this step."""
    request: dict[str, Any] | None = None
    """The action's first request on the wire (line ``request_line`` of the trace)."""
    reply: dict[str, Any] | None = None
    """The last reply to the action's requests (line ``reply_line``)."""
    request_line: int | None = None
    reply_line: int | None = None
    rounds: int = 0
    """Requests of the action itself (more than one: pages, or input rounds)."""
    relisted: bool = False
    """The client listed the tools again after a list change, at the end of this step."""
    host: dict[str, Any] | None = None
    notifications: list[str] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    """Tool names a ``tools/list`` of the action (or the setup) answered, pages joined."""

    def seen(self) -> dict[str, Any] | None:
        """What the host let the agent see after this step; None when the session ended here."""
        kind = (self.action or {}).get("kind")
        if kind in ("finish", "give_up"):
            return None
        crash = next((n["crash"] for n in self.notes if "crash" in n), None)
        out: dict[str, Any]
        if self.host is not None:  # a JSON-RPC error: the host's view of it, not the wire's
            out = {"kind": "rpc_error", "code": self.host.get("code"), "message": self.host.get("message")}
        elif crash is not None:
            out = {"kind": "transport_error", "message": crash}
        elif kind == "wait":
            wait = next(n for n in self.notes if n.get("action") == "wait")
            out = {"kind": "waited", "seconds": wait.get("seconds"), "now": wait.get("clock")}
        elif kind in ("list", "start"):
            out = {"kind": "tools", "tools": list(self.tools)}
        elif self.reply is not None and isinstance(self.reply.get("result"), dict):
            result = self.reply["result"]
            content = result.get("content")
            blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            out = {"kind": "result", "isError": result.get("isError") is True, "content": blocks}
        elif self.reply is not None and "error" in self.reply:
            out = {"kind": "rpc_error", "code": (self.reply.get("error") or {}).get("code"), "message": None}
        else:
            out = {"kind": "nothing"}
        if self.notifications:
            out["notifications"] = list(self.notifications)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "action": self.action,
            "lines": self.lines,
            "request_line": self.request_line,
            "reply_line": self.reply_line,
            "rounds": self.rounds,
            "relisted": self.relisted,
            "seen": self.seen(),
            "notifications": self.notifications,
            "faults": self.faults,
            "notes": self.notes,
        }


@dataclass
class Timeline:
    """A trace cut into steps, with what its end note says and whether the cut is exact."""

    steps: list[Step]
    end: dict[str, Any] | None
    problems: list[str]

    @property
    def exact(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": [s.to_json() for s in self.steps],
            "end": self.end,
            "exact": self.exact,
            "problems": self.problems,
        }


def parse_lines(data: bytes | str) -> list[dict[str, Any]]:
    """The trace's lines as objects; a line that is no JSON object is kept as ``{"unreadable": text}``."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            rec = None
        out.append(rec if isinstance(rec, dict) else {"unreadable": line})
    return out


def _params(msg: dict[str, Any]) -> dict[str, Any]:
    params = msg.get("params")
    return params if isinstance(params, dict) else {}


def _action_of(msg: dict[str, Any]) -> dict[str, Any]:
    method = msg.get("method")
    params = _params(msg)
    if method == "tools/call":
        return {"kind": "call", "tool": params.get("name"), "arguments": params.get("arguments")}
    if method == "tools/list":
        return {"kind": "list"}
    return {"kind": "request", "method": method}


def _continues(msg: dict[str, Any]) -> bool:
    """A request that goes on with the request in hand rather than starting an action."""
    params = _params(msg)
    if msg.get("method") == "tools/call":
        return "requestState" in params or "inputResponses" in params
    return msg.get("method") == "tools/list" and params.get("cursor") is not None


def _note_action(fields: dict[str, Any]) -> dict[str, Any] | None:
    what = fields.get("action")
    if what == "wait":
        return {"kind": "wait", "seconds": fields.get("seconds")}
    if what == "give_up":
        return {"kind": "give_up", "reason": fields.get("reason")}
    if what == "finish":
        return {"kind": "finish"}
    return None


def timeline(lines: Sequence[dict[str, Any]]) -> Timeline:
    """Cut parsed trace lines (:func:`parse_lines`) into steps; see the module docstring."""
    setup = Step(0, action={"kind": "start"})
    steps: dict[int, Step] = {0: setup}
    cur = setup
    in_setup = True
    owner: dict[Any, tuple[Step, bool]] = {}  # request id -> (its step, part of the step's action?)
    relist_due = False
    fresh = False  # cur was started by a request no note has confirmed yet
    end: dict[str, Any] | None = None
    problems: list[str] = []

    def start(n: int) -> Step:
        step = steps.get(n)
        if step is None:
            step = steps[n] = Step(n)
        return step

    latest: dict[str, Any] = {}
    """The last message of each direction, for a line that names it instead of repeating it."""
    for i, rec in enumerate(lines):
        direction = rec.get("dir")
        if direction == "harness":
            n = rec.get("step")
            fields = {k: v for k, v in rec.items() if k not in ("dir", "step")}
            if not isinstance(n, int):
                target = cur
            elif n > cur.step:
                in_setup = False
                if fresh and n == cur.step + 1 and AFTER_CALL.intersection(fields):
                    # This note follows the request of ``cur``: ``cur`` is step n, and step n-1
                    # sent nothing (a tools list answered from the client's cache).
                    del steps[cur.step]
                    gap = start(cur.step)
                    gap.action = None
                    cur.step = n
                    steps[n] = cur
                    target = cur
                else:
                    target = cur = start(n)
                fresh = False
            elif n == cur.step:
                target = cur
                fresh = False
            else:
                target = steps.get(n, cur)
            target.lines.append(i)
            target.notes.append(fields)
            if "fault" in fields and isinstance(fields["fault"], dict):
                target.faults.append(fields["fault"])
            if "host" in fields and isinstance(fields["host"], dict):
                target.host = fields["host"]
            acted = _note_action(fields)
            if acted is not None and target.action is None:
                target.action = acted
            if "end" in fields:
                end = {"step": n, **fields}
            continue
        msg = rec.get("msg")
        if "same" in rec:  # a proxy's line for a message it passed on unchanged: the one it names
            msg = latest.get(rec["same"])
        elif isinstance(direction, str):
            latest[direction] = msg
        if not isinstance(msg, dict):
            cur.lines.append(i)
            continue
        if direction == "c2s":
            if "method" in msg and "id" in msg:  # a request
                part = True
                if in_setup or _continues(msg):
                    pass
                elif msg.get("method") == "tools/list" and relist_due:
                    part, relist_due = False, False
                    cur.relisted = True
                elif cur.action is None and cur.step > 0 and cur.request is None:
                    pass  # a note (harmful, misled) opened this step before its request went out
                else:
                    cur = start(cur.step + 1)
                    fresh = True
                if part and not in_setup:
                    if cur.request is None:
                        cur.request, cur.request_line = msg, i
                        cur.action = cur.action or _action_of(msg)
                    cur.rounds += 1
                    if msg.get("method") == "tools/list" and not _continues(msg):
                        cur.tools = []
                elif in_setup and msg.get("method") == "tools/list" and not _continues(msg):
                    cur.tools = []
                owner[msg.get("id")] = (cur, part)
            cur.lines.append(i)
        elif direction == "s2c":
            if "id" in msg and ("result" in msg or "error" in msg):
                step, part = owner.pop(msg.get("id"), (cur, False))
                step.lines.append(i)
                result = msg.get("result")
                result = result if isinstance(result, dict) else {}
                tools = result.get("tools")
                listed = isinstance(tools, list)
                if part or step is setup:
                    if isinstance(tools, list) and (
                        step is setup or (step.action or {}).get("kind") == "list"
                    ):
                        step.tools.extend(str(t.get("name")) for t in tools if isinstance(t, dict))
                    if step is not setup or listed:
                        step.reply, step.reply_line = msg, i
                if in_setup and listed and not result.get("nextCursor"):
                    in_setup = False
            else:
                method = msg.get("method")
                cur.lines.append(i)
                if isinstance(method, str) and "id" not in msg:
                    cur.notifications.append(method)
                    if method == LIST_CHANGED and not in_setup:
                        relist_due = True
        else:
            cur.lines.append(i)

    ordered = [steps[k] for k in sorted(steps)]
    if setup.notifications and len(ordered) > 1:
        # Nothing is pumped before the agent's first action: what arrived during the setup
        # (a subscription's acknowledgement) rides on the first step's observation.
        ordered[1].notifications[:0] = setup.notifications
        setup.notifications = []
    last = ordered[-1].step
    if end is not None and isinstance(end.get("step"), int) and end["step"] != last:
        problems.append(f"the trace's end note is at step {end['step']}, its lines make {last} steps")
    if end is None:
        problems.append("the trace has no end note (cut short?)")
    return Timeline(ordered, end, problems)


def seen_key(step: Step | None) -> str:
    """A canonical text of what the agent saw after ``step`` (None: no such step)."""
    if step is None:
        return "<no step>"
    return json.dumps(step.seen(), sort_keys=True, separators=(",", ":"))


def action_key(step: Step | None) -> str:
    if step is None:
        return "<no step>"
    return json.dumps(step.action, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Divergence:
    """Where two timelines part: the first step whose observation differs, and whose action does."""

    seen: int | None
    action: int | None
    steps: int
    """Rows of the alignment: the longer timeline's steps."""


def first_divergence(a: Timeline, b: Timeline) -> Divergence:
    """Align ``a`` and ``b`` by step; the first step at which what the agent saw differs.

    A step one session has and the other has not (it had ended) differs. Two identical
    timelines give ``Divergence(None, None, n)``.
    """
    by_a = {s.step: s for s in a.steps}
    by_b = {s.step: s for s in b.steps}
    numbers = sorted(set(by_a) | set(by_b))
    seen = action = None
    for n in numbers:
        sa, sb = by_a.get(n), by_b.get(n)
        if action is None and action_key(sa) != action_key(sb):
            action = n
        if seen is None and seen_key(sa) != seen_key(sb):
            seen = n
        if seen is not None and action is not None:
            break
    return Divergence(seen, action, len(numbers))


def fault_kinds(t: Timeline) -> dict[str, int]:
    """How many faults of each kind fired in the session, by the trace."""
    out: dict[str, int] = {}
    for step in t.steps:
        for fault in step.faults:
            kind = str(fault.get("kind"))
            out[kind] = out.get(kind, 0) + 1
    return out


def steps_json(t: Timeline, raw: Iterable[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The timeline as JSON, with the fault counts; ``raw`` lines are added when given."""
    doc = t.to_json()
    doc["faults"] = fault_kinds(t)
    if raw is not None:
        doc["raw"] = list(raw)
    return doc
