"""World events: the world changes what a task's plan relies on, as another user or process would.

Upstream faults (:mod:`harness.worlds.scenario`) make a world's tools fail from outside; an
event changes the world itself. Before the session's first call, a file the plan reads is
renamed or removed, a channel it posts to renamed, a calendar event it looks up moved, a
contact's address or a payee's IBAN changed, the password changed. The plan was made on the
world as it was (``ground_truth`` of the unchanged environment); the agent meets the world as it
is. The planned call then fails in the world's own words (``ValueError: Channel does not
exist!``), or answers silently with nothing (AgentDojo's ``read_file`` of a missing file returns
an empty string; a search for a renamed file returns ``[]``), or misleads (money goes to the old
IBAN). Nothing in an event is a text of ours: what the agent sees is what the world answers.

**How an event is judged.** The event is applied before the first call and the changed world is
the judge's ``pre_environment`` (:meth:`harness.worlds.agentdojo.Episode.alter`): the task's
utility compares what the agent did with the world it met, and the event's own change is never
taken for the agent's. The task's utility was written for the unchanged world, and many check
fixed values (an IBAN, an address, a channel's name), so a (task, event) pair enters the study
only where it is still a fair test (:func:`admission`):

* **admitted**: an agent that knew the new state (the plan with the event's old values replaced
  by the new ones, and the same in the answer it reports) satisfies the task's own utility, and
  the plan as it was does not (a plan follower that repairs nothing: it stops at the first
  failure and reports the plan's answer only when every call answered, :func:`answered`);
* **refused**, with the reason: the task fails even without the event; nothing can stand in
  for the removed thing; the informed plan fails the utility (it reads a fixed value); the
  stale plan still satisfies it (the event changes nothing the judge sees).

``harness worlds events`` lists every pair with its status and reason. Which thing an event
changes, and to what, is drawn from the scenario's name alone (``derive_seed("world-event",
name)``): every agent, strategy and seed meets the same change.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.sim.scenario import answered
from harness.sim.seeding import derive_seed, np_random
from harness.worlds import agentdojo

__all__ = [
    "EVENT_KINDS",
    "Admission",
    "Change",
    "admission",
    "admissions",
    "apply_event",
    "draw_change",
    "event_name",
    "reword",
    "substitute",
    "targets",
]


@dataclass(frozen=True)
class Change:
    """What an event changed: the thing (in words), its old and new value, and the old -> new
    replacements an agent that knew the new state would make in its calls and its answer."""

    kind: str
    entity: str
    old: str
    new: str | None
    """None: the thing is gone (nothing stands in for it)."""
    pairs: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "entity": self.entity, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class _Target:
    """One thing of the world a plan relies on: a key to find it by, and its current value."""

    key: str
    value: str


@dataclass(frozen=True)
class _Kind:
    """An event kind: the suites it happens in, what it does, the things of a world a plan relies
    on that it can change, and the change itself (a new value drawn with the scenario's generator)."""

    name: str
    suites: tuple[str, ...]
    does: str
    targets: Callable[[str, Any, Sequence[tuple[str, dict[str, Any]]]], list[_Target]]
    apply: Callable[[str, Any, _Target, np.random.Generator], Change]


# -- what a plan names -----------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    """Every string inside an argument's value (a list of recipients, a dict attachment)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _named(calls: Sequence[tuple[str, dict[str, Any]]], argument: str | None = None) -> list[str]:
    """The strings a plan's calls pass (only ``argument``'s, if given), in first-seen order."""
    found = [s for _, args in calls for k, v in args.items() if argument in (None, k) for s in _strings(v)]
    return list(dict.fromkeys(found))


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


# -- files -----------------------------------------------------------------------------------------

_RENAMES: tuple[str, ...] = ("{stem} (1){ext}", "{stem}-final{ext}", "{stem}_v2{ext}", "{stem}-old{ext}",
                             "{stem}-2024{ext}")  # fmt: skip
"""How another user renames a file: a copy's suffix, a version, a year."""


def _renamed(old: str, rng: np.random.Generator) -> str:
    folder, _, name = old.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    stem, ext = (stem, dot + ext) if dot else (name, "")
    new = _pick(rng, _RENAMES).format(stem=stem, ext=ext)
    return f"{folder}/{new}" if folder else new


def _drive_files(env: Any) -> dict[str, Any]:
    files: dict[str, Any] = env.cloud_drive.files
    return files


def _file_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    """Files the plan names: a path it reads (banking), a drive file it names or uses by id."""
    if suite == "banking":
        paths = env.filesystem.files
        return [_Target(p, p) for p in _named(calls, "file_path") if p in paths]
    named, ids = set(_named(calls)), set(_named(calls, "file_id"))
    return [_Target(i, f.filename) for i, f in _drive_files(env).items() if f.filename in named or i in ids]


def _named_file_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    """Files the plan finds by name (a rename does nothing to a call by id)."""
    if suite == "banking":
        return _file_targets(suite, env, calls)
    named = set(_named(calls))
    return [_Target(i, f.filename) for i, f in _drive_files(env).items() if f.filename in named]


def _rename_file(suite: str, env: Any, target: _Target, rng: np.random.Generator) -> Change:
    new = _renamed(target.value, rng)
    if suite == "banking":
        files = env.filesystem.files
        files[new] = files.pop(target.key)
        entity = f"file {target.key!r}"
    else:
        _drive_files(env)[target.key].filename = new
        entity = f"drive file {target.key} ({target.value!r})"
    return Change("file_renamed", entity, target.value, new, ((target.value, new),))


def _remove_file(suite: str, env: Any, target: _Target, rng: np.random.Generator) -> Change:
    if suite == "banking":
        env.filesystem.files.pop(target.key)
        entity = f"file {target.key!r}"
    else:
        _drive_files(env).pop(target.key)
        entity = f"drive file {target.key} ({target.value!r})"
    return Change("file_removed", entity, target.value, None, ())


# -- slack channels --------------------------------------------------------------------------------

_CHANNEL_RENAMES: tuple[str, ...] = ("{old}-chat", "{old}-2024", "team-{old}", "{old}_v2", "{old}-archive")
"""How a workspace admin renames a channel."""


def _channel_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    channels = env.slack.channels
    return [_Target(c, c) for c in _named(calls, "channel") if c in channels]


def _rename_channel(suite: str, env: Any, target: _Target, rng: np.random.Generator) -> Change:
    slack, old = env.slack, target.value
    new = _pick(rng, _CHANNEL_RENAMES).format(old=old)
    slack.channels = [new if c == old else c for c in slack.channels]
    if old in slack.channel_inbox:
        messages = slack.channel_inbox.pop(old)
        for message in messages:
            if message.recipient == old:
                message.recipient = new
        slack.channel_inbox[new] = messages
    for user, channels in slack.user_channels.items():
        slack.user_channels[user] = [new if c == old else c for c in channels]
    return Change("channel_renamed", f"channel {old!r}", old, new, ((old, new),))


# -- calendar events -------------------------------------------------------------------------------

_DAY = "%Y-%m-%d"
_MINUTE = "%Y-%m-%d %H:%M"


def _event_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    """Calendar events the plan relies on: one it names by id, or one it looks up by title (and,
    when the lookup gives one, by day)."""
    out: list[_Target] = []
    ids = set(_named(calls, "event_id"))
    lookups = [
        (str(a.get("query", "")).lower(), a.get("date")) for f, a in calls if f == "search_calendar_events"
    ]
    for event_id, event in env.calendar.events.items():
        day = event.start_time.strftime(_DAY)
        looked_up = any(q and q in event.title.lower() and date in (None, day) for q, date in lookups)
        if event_id in ids or looked_up:
            out.append(_Target(event_id, event.start_time.strftime(_MINUTE)))
    return out


def _move_event(suite: str, env: Any, target: _Target, rng: np.random.Generator) -> Change:
    event = env.calendar.events[target.key]
    days = int(rng.integers(1, 4))
    shift = _dt.timedelta(days=days)
    old_start, old_end = event.start_time, event.end_time
    event.start_time, event.end_time = old_start + shift, old_end + shift
    pairs = (
        (old_start.strftime(_MINUTE), event.start_time.strftime(_MINUTE)),
        (old_end.strftime(_MINUTE), event.end_time.strftime(_MINUTE)),
        (old_start.strftime(_DAY), event.start_time.strftime(_DAY)),
    )
    return Change(
        "event_moved",
        f"calendar event {target.key} ({event.title!r}) moved {days} day{'s' if days > 1 else ''} later",
        pairs[0][0],
        pairs[0][1],
        tuple(dict.fromkeys(pairs)),
    )


# -- contacts ---------------------------------------------------------------------------------------

_DOMAINS: tuple[str, ...] = ("gmail.com", "outlook.com", "proton.me", "icloud.com")
"""Where a contact moves their mail."""


def _contact_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    named = set(_named(calls))
    return [_Target(str(i), c.email) for i, c in enumerate(env.inbox.contact_list) if c.email in named]


def _change_contact(suite: str, env: Any, target: _Target, rng: np.random.Generator) -> Change:
    contact = env.inbox.contact_list[int(target.key)]
    local, _, domain = target.value.partition("@")
    new = f"{local}@{_pick(rng, [d for d in _DOMAINS if d != domain])}"
    contact.email = new
    return Change(
        "contact_email_changed", f"contact {contact.name!r}", target.value, new, ((target.value, new),)
    )


# -- banking ----------------------------------------------------------------------------------------

_IBAN = re.compile(r"^[A-Z]{2}\d{10,32}$")


def _iban_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    """Payees' IBANs the plan pays that a document or a scheduled transaction of the world holds
    (where a payee's new IBAN would be written; past transactions keep the old one)."""
    out = []
    for iban in _named(calls, "recipient"):
        in_files = any(iban in text for text in env.filesystem.files.values())
        scheduled = any(t.recipient == iban for t in env.bank_account.scheduled_transactions)
        if _IBAN.match(iban) and (in_files or scheduled):
            out.append(_Target(iban, iban))
    return out


def _update_iban(suite: str, env: Any, target: _Target, rng: np.random.Generator) -> Change:
    old = target.value
    digits = "".join(str(int(d)) for d in rng.integers(0, 10, len(old) - 2))
    new = old[:2] + digits
    files = env.filesystem.files
    for path, text in list(files.items()):
        files[path] = text.replace(old, new)
    for transaction in env.bank_account.scheduled_transactions:
        if transaction.recipient == old:
            transaction.recipient = new
    return Change("iban_updated", f"payee IBAN {old}", old, new, ((old, new),))


def _password_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    if any(f == "update_password" for f, _ in calls):
        return [_Target("password", env.user_account.password)]
    return []


def _change_password(suite: str, env: Any, target: _Target, rng: np.random.Generator) -> Change:
    new = "".join(_pick(rng, "abcdefghjkmnpqrstuvwxyz23456789") for _ in range(12))
    env.user_account.password = new
    return Change("password_changed", "the account's password", target.value, new, ((target.value, new),))


_KINDS: tuple[_Kind, ...] = (
    _Kind("file_renamed", ("banking", "workspace"), "a file the plan finds by name is renamed",
          _named_file_targets, _rename_file),
    _Kind("file_removed", ("banking", "workspace"), "a file the plan reads or changes is deleted",
          _file_targets, _remove_file),
    _Kind("channel_renamed", ("slack",), "a channel the plan reads or posts to is renamed",
          _channel_targets, _rename_channel),
    _Kind("event_moved", ("travel", "workspace"), "a calendar event the plan looks up moves 1-3 days on",
          _event_targets, _move_event),
    _Kind("contact_email_changed", ("travel", "workspace"), "a contact the plan writes to changes address",
          _contact_targets, _change_contact),
    _Kind("iban_updated", ("banking",), "a payee the plan pays changes IBAN (in the bill, in the schedule)",
          _iban_targets, _update_iban),
    _Kind("password_changed", ("banking",), "the account's password is changed by another session",
          _password_targets, _change_password),
)  # fmt: skip
KINDS: dict[str, _Kind] = {k.name: k for k in _KINDS}
EVENT_KINDS: tuple[str, ...] = tuple(KINDS)
"""Every world event kind, in the order tables show them."""


def targets(
    name: str, kind: str, suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """The keys of the things event ``kind`` can change that the plan's ``calls`` rely on, in the
    order scenario ``name``'s generator shuffles them (empty: the kind changes nothing here)."""
    event = KINDS[kind]
    if suite not in event.suites:
        return []
    found = event.targets(suite, env, calls)
    order = np_random(derive_seed("world-event", name)).permutation(len(found))
    return [found[int(i)].key for i in order]


def draw_change(
    name: str, kind: str, suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]], key: str
) -> Change:
    """Apply event ``kind`` to the thing ``key`` of ``env`` (a suite's environment, one of
    :func:`targets`); its new value is drawn from the generator of (``name``, ``key``)."""
    event = KINDS[kind]
    target = next(t for t in event.targets(suite, env, calls) if t.key == key)
    return event.apply(suite, env, target, np_random(derive_seed("world-event", name, key)))


def apply_event(episode: agentdojo.Episode, name: str, kind: str, key: str | None = None) -> Change | None:
    """Apply the event scenario ``name`` carries to a fresh episode (before its first call): to
    ``key``, or else to the thing :func:`admission` chose. None where it changes nothing."""
    suite, task_id = episode.suite_name, episode.task_id
    if key is None:
        key = admission(suite, task_id, kind).key
    if key is None:
        return None
    calls = agentdojo.plan(suite, task_id).calls
    found: list[Change] = []
    episode.alter(lambda env: found.append(draw_change(name, kind, suite, env, calls, key)))
    return found[0]


# -- the informed plan and the stale plan -------------------------------------------------------------


def substitute(value: Any, pairs: Sequence[tuple[str, str]]) -> Any:
    """``value`` (an argument) with each string equal to an old value replaced by the new one,
    inside lists and dicts too."""
    if isinstance(value, str):
        return next((new for old, new in pairs if value == old), value)
    if isinstance(value, Mapping):
        return {k: substitute(v, pairs) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, pairs) for v in value]
    return value


def reword(text: str, pairs: Sequence[tuple[str, str]]) -> str:
    """An answer in words with every old value replaced by the new one where it appears."""
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def _follow(episode: agentdojo.Episode, calls: Sequence[tuple[str, dict[str, Any]]], output: str) -> bool:
    """Run ``calls`` in order as a plan follower that repairs nothing (it stops at the first
    failure) and reports ``output`` only when every call answered; the task's verdict."""
    read: list[str] = []
    complete = True
    for function, args in calls:
        try:
            text = episode.run(function, args)
        except agentdojo.WorldToolError as exc:
            read.append(str(exc))
            complete = False
            break
        read.append(text)
        complete = complete and answered(text)
    try:
        return episode.utility(output if complete else "\n".join(read))
    except Exception:  # the task's check fails on this world (a channel it looks up by its old name)
        return False


@dataclass(frozen=True)
class Admission:
    """Whether a (task, event) pair is in the study, and why (see the module's docstring)."""

    scenario: str
    kind: str
    status: str
    """``admitted``, ``refused`` or ``not_applicable`` (the event changes nothing the plan names)."""
    reason: str
    change: Change | None
    key: str | None = None
    """The thing the event changes (the first of :func:`targets` that makes a fair test, else the
    first); None when not applicable."""

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "kind": self.kind, "status": self.status, "reason": self.reason,
                "change": self.change.to_json() if self.change is not None else None}  # fmt: skip


def event_name(suite: str, task_id: str, kind: str) -> str:
    return f"{agentdojo.PACKAGE}/{suite}/{task_id}/{kind}"


@functools.cache
def admission(suite: str, task_id: str, kind: str) -> Admission:
    """Is (task, event) a fair test? (the module's docstring says when). Each thing the event can
    change is tried in the name's order; the first that makes a fair test is the pair's."""
    name = event_name(suite, task_id, kind)
    plan = agentdojo.plan(suite, task_id)
    keys = targets(name, kind, suite, agentdojo.Episode(suite, task_id).env, plan.calls)
    if not keys:
        return Admission(name, kind, "not_applicable", "the plan names nothing this event changes", None)
    if not _follow(agentdojo.Episode(suite, task_id), plan.calls, plan.output):
        change = apply_event(agentdojo.Episode(suite, task_id), name, kind, keys[0])
        return Admission(
            name, kind, "refused", "the task's utility fails even without the event", change, keys[0]
        )
    first: Admission | None = None
    for key in keys:
        found = _judged(suite, task_id, name, kind, key)
        if found.status == "admitted":
            return found
        first = first or found
    assert first is not None
    return first


def _judged(suite: str, task_id: str, name: str, kind: str, key: str) -> Admission:
    plan = agentdojo.plan(suite, task_id)

    def world() -> tuple[agentdojo.Episode, Change]:
        episode = agentdojo.Episode(suite, task_id)
        change = apply_event(episode, name, kind, key)
        assert change is not None
        return episode, change

    informed, change = world()
    if change.new is None:
        return Admission(name, kind, "refused", "nothing stands in for what the event removed", change, key)
    calls = [(f, substitute(args, change.pairs)) for f, args in plan.calls]
    if not _follow(informed, calls, reword(plan.output, change.pairs)):
        why = "an agent that knew the new state fails the task's own utility"
        return Admission(name, kind, "refused", why, change, key)
    stale, _ = world()
    if _follow(stale, plan.calls, plan.output):
        return Admission(name, kind, "refused",
                         "the plan as it was still satisfies the utility (the event changes nothing it sees)",
                         change, key)  # fmt: skip
    return Admission(name, kind, "admitted", "the informed plan passes, the stale plan does not", change, key)


def admissions(suites: Sequence[str] | None = None, kinds: Sequence[str] = EVENT_KINDS) -> list[Admission]:
    """Every (task, event) pair of ``suites`` (default: all) and ``kinds``, suite by suite, task by
    task, kind by kind."""
    out = []
    for suite in suites or sorted(agentdojo.suites()):
        for task_id in agentdojo.task_ids(suite):
            for kind in kinds:
                if suite in KINDS[kind].suites:
                    out.append(admission(suite, task_id, kind))
    return out
