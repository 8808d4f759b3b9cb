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

**New values, drawn without looking at any repair.** Every kind that gives the thing a new
value has two conditions, named by :data:`RENAMES`: ``similar`` keeps the old value inside the
new one (a word of the world's own vocabulary added to a name, the same mailbox at another
provider, the same IBAN with its last digits changed, a move of a few days), ``dissimilar``
shares no word with it (a name made of the world's own words, another mailbox, every digit
redrawn, a move of weeks). The world's vocabulary is every word of four to ten letters in the
suite's default environment (:func:`vocabulary`). The condition is the scenario's fourth part:
``channel_renamed_similar``, ``channel_renamed_dissimilar``; ``file_removed`` gives no new value
and has one condition. No distribution here was written to fit the repair's threshold
(``scripted_agents/world.py``), and a repair that cannot undo a dissimilar rename is a finding.

**How an event is judged.** The event is applied before the first call and the changed world is
the judge's ``pre_environment`` (:meth:`harness.worlds.agentdojo.Episode.alter`): the task's
utility compares what the agent did with the world it met, and the event's own change is never
taken for the agent's. The task's utility was written for the unchanged world, and many check
fixed values (an IBAN, an address, a channel's name), so a (task, event) pair enters the study
only where it is still a fair test (:func:`admission`), decided by the task's own plan and judge
alone, never by what a repair of ours can undo:

* **admitted**: an agent that knew the new state (the plan with the event's old values replaced
  by the new ones, and the same in the answer it reports; for a removed file, the plan as it is)
  satisfies the task's own utility;
* **refused**, with the reason: the task fails even without the event, or the informed plan
  fails the utility (it reads a fixed value, or nothing stands in for what was removed).

Beside the verdict, ``stale_passes`` says whether the plan as it was (a plan follower that
repairs nothing: it stops at the first failure and reports the plan's answer only when every
call answered, :func:`answered`) still satisfies the utility: a pair where it does measures
whether an agent trips over a change the judge does not see; it is admitted all the same.

``harness worlds events`` lists every pair with its condition, status and reason. Which thing an
event changes, and to what, is drawn from the scenario's name alone (``derive_seed("world-event",
name)``): every agent, strategy and seed meets the same change.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.scenarios.scenario import answered
from harness.seeding import derive_seed, np_random
from harness.worlds import agentdojo

__all__ = [
    "EVENT_CONDITIONS",
    "EVENT_KINDS",
    "RENAMES",
    "Admission",
    "Change",
    "admission",
    "admissions",
    "apply_event",
    "condition_of",
    "draw_change",
    "event_name",
    "reword",
    "split_condition",
    "substitute",
    "targets",
    "vocabulary",
]

RENAMES: tuple[str, ...] = ("similar", "dissimilar")
"""How an event's new value is drawn (the module's docstring): the old value kept inside it, or
nothing of it kept."""


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
class _Draw:
    """What a new value is drawn with: the scenario's generator, the rename condition (None for a
    kind that gives no new value) and the world's words."""

    rng: np.random.Generator
    rename: str | None
    words: tuple[str, ...]

    def word(self, avoid: str = "") -> str:
        """A word of the world that shares nothing with ``avoid`` (neither holds the other)."""
        low = avoid.lower()
        options = [w for w in self.words if w not in low and not any(p in w for p in _parts(low))]
        return _pick(self.rng, options or self.words)

    @property
    def similar(self) -> bool:
        return self.rename == "similar"


@dataclass(frozen=True)
class _Kind:
    """An event kind: the suites it happens in, what it does, the things of a world a plan relies
    on that it can change, the change itself (a new value drawn with :class:`_Draw`), and whether
    it gives a new value (then it has a condition per :data:`RENAMES`)."""

    name: str
    suites: tuple[str, ...]
    does: str
    targets: Callable[[str, Any, Sequence[tuple[str, dict[str, Any]]]], list[_Target]]
    apply: Callable[[str, Any, _Target, _Draw], Change]
    renames: bool = True


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


def _parts(text: str) -> list[str]:
    """The words of four letters or more in a value (``team-building`` gives team, building)."""
    return re.findall(r"[a-z]{4,}", text.lower())


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _texts(k)
            yield from _texts(v)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            yield from _texts(v)


@functools.cache
def vocabulary(suite: str) -> tuple[str, ...]:
    """The world's own words: every lower-case word of 4-10 letters in the suite's default
    environment's text, sorted (what a new name is made of; chosen without any repair in view)."""
    env = agentdojo.default_environment(suite)
    words = {w for t in _texts(env.model_dump()) for w in re.findall(r"[a-z]+", t.lower())}
    return tuple(sorted(w for w in words if 4 <= len(w) <= 10))


def _fresh(draw: Callable[[], str], taken: Collection[str]) -> str:
    """A drawn value that names nothing already there (drawn again, up to 20 times)."""
    value = draw()
    for _ in range(20):
        if value not in taken:
            break
        value = draw()
    return value


# -- files -----------------------------------------------------------------------------------------


def _renamed(old: str, d: _Draw) -> str:
    """A file's new name: similar keeps the stem with a word of the world's before or after it
    (``feedback-survey.xlsx``); dissimilar is one or two of the world's words, the extension kept."""
    folder, _, name = old.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    stem, ext = (stem, dot + ext) if dot else (name, "")
    if d.similar:
        form = _pick(d.rng, ("{stem}-{w}{ext}", "{stem}_{w}{ext}", "{w}-{stem}{ext}", "{stem} {w}{ext}"))
        new = form.format(stem=stem, w=d.word(stem), ext=ext)
    else:
        words = [d.word(stem) for _ in range(int(d.rng.integers(1, 3)))]
        new = "-".join(words) + ext
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


def _rename_file(suite: str, env: Any, target: _Target, d: _Draw) -> Change:
    if suite == "banking":
        files = env.filesystem.files
        new = _fresh(lambda: _renamed(target.value, d), files)
        files[new] = files.pop(target.key)
        entity = f"file {target.key!r}"
    else:
        names = {f.filename for f in _drive_files(env).values()}
        new = _fresh(lambda: _renamed(target.value, d), names)
        _drive_files(env)[target.key].filename = new
        entity = f"drive file {target.key} ({target.value!r})"
    return Change("file_renamed", entity, target.value, new, ((target.value, new),))


def _remove_file(suite: str, env: Any, target: _Target, d: _Draw) -> Change:
    if suite == "banking":
        env.filesystem.files.pop(target.key)
        entity = f"file {target.key!r}"
    else:
        _drive_files(env).pop(target.key)
        entity = f"drive file {target.key} ({target.value!r})"
    return Change("file_removed", entity, target.value, None, ())


# -- slack channels --------------------------------------------------------------------------------


def _channel_name(old: str, d: _Draw) -> str:
    """A channel's new name: similar keeps the old name with a word of the world's beside it
    (``random-travel``, ``lunch-general``); dissimilar is one or two of the world's words."""
    if d.similar:
        form = _pick(d.rng, ("{old}-{w}", "{w}-{old}", "{old}_{w}"))
        return form.format(old=old, w=d.word(old))
    return "-".join(d.word(old) for _ in range(int(d.rng.integers(1, 3))))


def _channel_targets(suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[_Target]:
    channels = env.slack.channels
    return [_Target(c, c) for c in _named(calls, "channel") if c in channels]


def _rename_channel(suite: str, env: Any, target: _Target, d: _Draw) -> Change:
    slack, old = env.slack, target.value
    new = _fresh(lambda: _channel_name(old, d), slack.channels)
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


def _move_event(suite: str, env: Any, target: _Target, d: _Draw) -> Change:
    """Similar: 1-3 days later; dissimilar: 1-8 weeks later (a day of another month, mostly)."""
    event = env.calendar.events[target.key]
    days = int(d.rng.integers(1, 4)) if d.similar else 7 * int(d.rng.integers(1, 9))
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


def _change_contact(suite: str, env: Any, target: _Target, d: _Draw) -> Change:
    """Similar: the same mailbox at another provider; dissimilar: a new mailbox of two of the
    world's words at another provider."""
    contact = env.inbox.contact_list[int(target.key)]
    local, _, domain = target.value.partition("@")
    if not d.similar:
        local = f"{d.word(local)}.{d.word(local)}"
    new = f"{local}@{_pick(d.rng, [x for x in _DOMAINS if x != domain])}"
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


def _update_iban(suite: str, env: Any, target: _Target, d: _Draw) -> Change:
    """Similar: the last four digits redrawn (another account at the same bank); dissimilar:
    every digit redrawn."""
    old = target.value
    kept = len(old) - 4 if d.similar else 2
    new = old[:kept] + "".join(str(int(x)) for x in d.rng.integers(0, 10, len(old) - kept))
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


def _change_password(suite: str, env: Any, target: _Target, d: _Draw) -> Change:
    """Similar: the old password with two digits added; dissimilar: twelve characters drawn."""
    if d.similar:
        new = target.value + "".join(str(int(x)) for x in d.rng.integers(0, 10, 2))
    else:
        new = "".join(_pick(d.rng, "abcdefghjkmnpqrstuvwxyz23456789") for _ in range(12))
    env.user_account.password = new
    return Change("password_changed", "the account's password", target.value, new, ((target.value, new),))


_KINDS: tuple[_Kind, ...] = (
    _Kind("file_renamed", ("banking", "workspace"), "a file the plan finds by name is renamed",
          _named_file_targets, _rename_file),
    _Kind("file_removed", ("banking", "workspace"), "a file the plan reads or changes is deleted",
          _file_targets, _remove_file, renames=False),
    _Kind("channel_renamed", ("slack",), "a channel the plan reads or posts to is renamed",
          _channel_targets, _rename_channel),
    _Kind("event_moved", ("travel", "workspace"), "a calendar event the plan looks up moves later",
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

CONDITIONS: dict[str, tuple[str, str | None]] = {
    (f"{k.name}_{r}" if r else k.name): (k.name, r)
    for k in _KINDS
    for r in (RENAMES if k.renames else (None,))
}
"""Each world event condition (a scenario's fourth part) -> its kind and rename condition."""
EVENT_CONDITIONS: tuple[str, ...] = tuple(CONDITIONS)
"""Every world event condition, kind by kind, ``similar`` before ``dissimilar``."""


def split_condition(condition: str) -> tuple[str, str | None]:
    """A world event condition's kind and rename condition (``channel_renamed_dissimilar`` gives
    ``("channel_renamed", "dissimilar")``)."""
    return CONDITIONS[condition]


def condition_of(kind: str, rename: str | None) -> str:
    """The condition of ``kind`` under ``rename`` (None for a kind that gives no new value)."""
    return next(c for c, (k, r) in CONDITIONS.items() if k == kind and r == rename)


def targets(
    name: str, condition: str, suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """The keys of the things ``condition``'s kind can change that the plan's ``calls`` rely on,
    in the order scenario ``name``'s generator shuffles them (empty: it changes nothing here)."""
    event = KINDS[split_condition(condition)[0]]
    if suite not in event.suites:
        return []
    found = event.targets(suite, env, calls)
    order = np_random(derive_seed("world-event", name)).permutation(len(found))
    return [found[int(i)].key for i in order]


def draw_change(
    name: str, condition: str, suite: str, env: Any, calls: Sequence[tuple[str, dict[str, Any]]], key: str
) -> Change:
    """Apply event ``condition`` to the thing ``key`` of ``env`` (a suite's environment, one of
    :func:`targets`); its new value is drawn from the generator of (``name``, ``key``)."""
    kind, rename = split_condition(condition)
    event = KINDS[kind]
    target = next(t for t in event.targets(suite, env, calls) if t.key == key)
    draw = _Draw(np_random(derive_seed("world-event", name, key)), rename, vocabulary(suite))
    return event.apply(suite, env, target, draw)


def apply_event(
    episode: agentdojo.Episode, name: str, condition: str, key: str | None = None
) -> Change | None:
    """Apply the event scenario ``name`` carries to a fresh episode (before its first call): to
    ``key``, or else to the thing :func:`admission` chose. None where it changes nothing."""
    suite, task_id = episode.suite_name, episode.task_id
    if key is None:
        key = admission(suite, task_id, condition).key
    if key is None:
        return None
    calls = agentdojo.plan(suite, task_id).calls
    found: list[Change] = []
    episode.alter(lambda env: found.append(draw_change(name, condition, suite, env, calls, key)))
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
    condition: str
    status: str
    """``admitted``, ``refused`` or ``not_applicable`` (the event changes nothing the plan names)."""
    reason: str
    change: Change | None
    key: str | None = None
    """The thing the event changes (the first of :func:`targets` that makes a fair test, else the
    first); None when not applicable."""
    stale_passes: bool | None = None
    """Whether the plan as it was still satisfies the utility on the changed world (None: not
    tried); said, never used to admit or refuse."""

    @property
    def kind(self) -> str:
        return split_condition(self.condition)[0]

    @property
    def rename(self) -> str | None:
        return split_condition(self.condition)[1]

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "kind": self.kind, "condition": self.condition,
                "rename": self.rename, "status": self.status, "reason": self.reason,
                "stale_passes": self.stale_passes,
                "change": self.change.to_json() if self.change is not None else None}  # fmt: skip


def event_name(suite: str, task_id: str, condition: str) -> str:
    return f"{agentdojo.PACKAGE}/{suite}/{task_id}/{condition}"


@functools.cache
def admission(suite: str, task_id: str, condition: str) -> Admission:
    """Is (task, event) a fair test? (the module's docstring says when). Each thing the event can
    change is tried in the name's order; the first that makes a fair test is the pair's."""
    name = event_name(suite, task_id, condition)
    plan = agentdojo.plan(suite, task_id)
    keys = targets(name, condition, suite, agentdojo.Episode(suite, task_id).env, plan.calls)
    if not keys:
        return Admission(name, condition, "not_applicable", "the plan names nothing this event changes", None)
    if not _follow(agentdojo.Episode(suite, task_id), plan.calls, plan.output):
        change = apply_event(agentdojo.Episode(suite, task_id), name, condition, keys[0])
        why = "the task's utility fails even without the event"
        return Admission(name, condition, "refused", why, change, keys[0])
    first: Admission | None = None
    for key in keys:
        found = _judged(suite, task_id, name, condition, key)
        if found.status == "admitted":
            return found
        first = first or found
    assert first is not None
    return first


def _judged(suite: str, task_id: str, name: str, condition: str, key: str) -> Admission:
    plan = agentdojo.plan(suite, task_id)

    def world() -> tuple[agentdojo.Episode, Change]:
        episode = agentdojo.Episode(suite, task_id)
        change = apply_event(episode, name, condition, key)
        assert change is not None
        return episode, change

    informed, change = world()
    calls = [(f, substitute(args, change.pairs)) for f, args in plan.calls]
    passes = _follow(informed, calls, reword(plan.output, change.pairs))
    stale, _ = world()
    stale_passes = _follow(stale, plan.calls, plan.output)
    if not passes:
        why = (
            "the plan on the world without the thing fails the task's own utility"
            if change.new is None
            else "an agent that knew the new state fails the task's own utility"
        )
        return Admission(name, condition, "refused", why, change, key, stale_passes)
    return Admission(name, condition, "admitted", "the informed plan passes the task's own utility",
                     change, key, stale_passes)  # fmt: skip


def admissions(
    suites: Sequence[str] | None = None, conditions: Sequence[str] = EVENT_CONDITIONS
) -> list[Admission]:
    """Every (task, event) pair of ``suites`` (default: all) and ``conditions``, suite by suite,
    task by task, condition by condition."""
    out = []
    for suite in suites or sorted(agentdojo.suites()):
        for task_id in agentdojo.task_ids(suite):
            for condition in conditions:
                if suite in KINDS[split_condition(condition)[0]].suites:
                    out.append(admission(suite, task_id, condition))
    return out
