"""What the reader promises whatever the values in a text: properties over generated values.

Each property holds a carrier (the fixed words a library or a server writes around a value)
and lets hypothesis choose the value: a path, a file name, a URL with a query string, a quoted
token or the caller's own argument, each stuffed with the words that decide categories
elsewhere ("timeout", "forbidden", "rate limit", "not found", a status code). The reading must
not move with the value. The carriers are few and plain on purpose: the property is about the
values, and a carrier is only where one sits.
"""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.reading import read

TRIGGERS = (
    "timeout", "timed out", "forbidden", "denied", "unauthorized", "rate limit", "ratelimited",
    "too many requests", "not found", "no such file", "429", "503", "401", "404", "invalid",
    "required", "deprecated", "not allowed", "unavailable", "refused", "ECONNREFUSED", "quota",
    "expected", "already exists", "must be", "unknown tool", "retry after 5 seconds",
)  # fmt: skip
"""Words that decide a category when a text says them itself."""

_WORD = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=8)
_TRIGGER = st.sampled_from(TRIGGERS)
_PIECE = st.one_of(
    _WORD, _TRIGGER.map(lambda t: t.replace(" ", "_")), _TRIGGER.map(lambda t: t.replace(" ", "-"))
)


@st.composite
def paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_PIECE, min_size=1, max_size=4))
    name = draw(_PIECE) + draw(st.sampled_from((".txt", ".json", ".log", ".csv", ".md", "")))
    return "/" + "/".join([*parts, name])


@st.composite
def urls(draw: st.DrawFn) -> str:
    host = draw(_WORD) + draw(st.sampled_from((".example", ".invalid", ".test")))
    path = "/".join(draw(st.lists(_PIECE, max_size=3)))
    query = "&".join(f"{draw(_PIECE)}={draw(_PIECE)}" for _ in range(draw(st.integers(0, 3))))
    return f"{draw(st.sampled_from(('http', 'https')))}://{host}/{path}" + (f"?{query}" if query else "")


@st.composite
def file_names(draw: st.DrawFn) -> str:
    return "-".join(draw(st.lists(_PIECE, min_size=1, max_size=3))) + draw(
        st.sampled_from((".txt", ".json", ".log", ".yaml", ".py"))
    )


_TOKEN = st.lists(_PIECE, min_size=1, max_size=3).map("_".join)
"""A single quoted token: a name, an id, a code, as a text quotes what it was given."""
_PHRASE = st.lists(st.one_of(_WORD, _TRIGGER), min_size=1, max_size=5).map(" ".join)
"""Free words, triggers among them: what a caller may send in any string argument."""

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _category(text: str, arguments: dict[str, Any] | None = None) -> str:
    return read(text, arguments=arguments).category


# ------------------------------------------------------------ values never decide a category

_CARRIERS = (
    ("ENOENT: no such file or directory, open '{v}'", "not_found"),
    ("File not found: {v}", "not_found"),
    ("EACCES: permission denied, open '{v}'", "permission"),
    ("Access denied to {v}", "permission"),
    ("Failed to read {v}: connect ECONNREFUSED 127.0.0.1:5432", "transient"),
    ("Table {v} does not exist", "not_found"),
    ("Invalid date format: {v}", "bad_argument"),
    ("Request to {v} timed out after 30s", "timeout"),
    ("{v} already exists", "bad_argument"),
)


@_SETTINGS
@given(carrier=st.sampled_from(_CARRIERS), value=st.one_of(paths(), file_names(), urls()))
def test_a_path_a_file_name_or_a_url_never_decides_the_category(carrier: tuple[str, str], value: str) -> None:
    template, category = carrier
    assert _category(template.format(v=value)) == category


@_SETTINGS
@given(carrier=st.sampled_from(_CARRIERS), value=_TOKEN)
def test_a_quoted_token_never_decides_the_category(carrier: tuple[str, str], value: str) -> None:
    template, category = carrier
    template = template.replace("'{v}'", "{v}")
    for quote in ("'", '"', "`"):
        assert _category(template.format(v=f"{quote}{value}{quote}")) == category


@_SETTINGS
@given(carrier=st.sampled_from(_CARRIERS), value=_PHRASE, key=_WORD)
def test_the_caller_s_own_value_never_decides_the_category_wherever_it_is_echoed(
    carrier: tuple[str, str], value: str, key: str
) -> None:
    template, category = carrier
    assert _category(template.format(v=value), {key: value}) == category
    assert _category(template.format(v=value), {"nested": [{key: value}]}) == category


# ------------------------------------------------------------ connection, policy, JSON


_REFUSED = (
    "request to {u} failed, reason: connect ECONNREFUSED 127.0.0.1:{p}",
    'Get "{u}": dial tcp 127.0.0.1:{p}: connect: connection refused',
    "HTTPConnectionPool(host='localhost', port={p}): Max retries exceeded with url: {u} "
    "(Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))",
    "All connection attempts failed while fetching {u}",
    'Get "{u}": dial tcp: lookup api.invalid on 127.0.0.53:53: no such host',
    "net::ERR_CONNECTION_REFUSED at {u}",
    "Could not connect to {u}",
    "The server at {u} is unreachable",
)


@_SETTINGS
@given(carrier=st.sampled_from(_REFUSED), url=urls(), port=st.integers(1, 65535))
def test_a_connection_that_never_opened_is_transient_whatever_the_url_holds(
    carrier: str, url: str, port: int
) -> None:
    assert _category(carrier.format(u=url, p=port)) == "transient"


_POLICY = (
    "{t} is not allowed",
    "{t} is not permitted by the server's policy",
    "Writing to {t} is not allowed",
    "{t}: operation not permitted",
    "Refusing: {t} is prohibited",
)
_THINGS = st.sampled_from(
    (
        "DROP TABLE",
        "this operation",
        "access to the host",
        "deleting files",
        "shell commands",
        "network access",
    )
)


@_SETTINGS
@given(carrier=st.sampled_from(_POLICY), thing=st.one_of(_THINGS, paths()))
def test_a_refusal_by_policy_is_permission(carrier: str, thing: str) -> None:
    assert _category(carrier.format(t=thing)) == "permission"


_INNER = (
    ("Catalog Error: Table with name orders does not exist!", "not_found"),
    ("Parser Error: syntax error at or near SELEC", "bad_argument"),
    ("connect ECONNREFUSED 127.0.0.1:8123", "transient"),
    ("Rate limit exceeded", "rate_limited"),
    ("permission denied for table users", "permission"),
    ("Query timed out after 30 seconds", "timeout"),
)


@_SETTINGS
@given(
    inner=st.sampled_from(_INNER),
    key=st.sampled_from(("error", "message", "detail")),
    beside=st.dictionaries(
        st.sampled_from(("query", "sql", "path", "url", "input", "hint")), _PHRASE, max_size=3
    ),
    wrapper=st.sampled_from(("", "Error calling tool 'execute_query': ", "MCP error -32603: ")),
)
def test_a_json_wrapped_error_is_read_by_its_error_field(
    inner: tuple[str, str], key: str, beside: dict[str, str], wrapper: str
) -> None:
    text, category = inner
    envelope = {"success": False, **beside, key: text}
    assert _category(wrapper + json.dumps(envelope, indent=2)) == category
    assert _category(wrapper + json.dumps({"ok": False, **beside, "error": {"message": text}})) == category


# ------------------------------------------------------------ the argument a text names


_IDENTIFIER = st.one_of(
    st.lists(st.text(string.ascii_lowercase, min_size=2, max_size=6), min_size=2, max_size=4).map("_".join),
    st.lists(st.text(string.ascii_lowercase, min_size=2, max_size=6), min_size=2, max_size=4).map(
        lambda ws: ws[0] + "".join(w.capitalize() for w in ws[1:])
    ),
    st.lists(st.text(string.ascii_lowercase, min_size=2, max_size=6), min_size=2, max_size=3).map("-".join),
    st.lists(st.text(string.ascii_lowercase, min_size=2, max_size=6), min_size=2, max_size=3).map(".".join),
)
"""Argument names of several words: snake_case, camelCase, kebab-case, a dotted path."""

_MISSING = (
    "Missing required argument: {n}",
    "missing required parameter '{n}'",
    "{n} is required",
    "The '{n}' parameter is required",
    "'{n}' is a required property",
    'required argument "{n}" not found',
    "Field '{n}' is missing",
    "{n} must be provided",
)


@_SETTINGS
@given(carrier=st.sampled_from(_MISSING), name=_IDENTIFIER, sent=st.dictionaries(_WORD, _WORD, max_size=3))
def test_a_missing_argument_named_only_in_the_text_is_read_whole(
    carrier: str, name: str, sent: dict[str, str]
) -> None:
    sent.pop(name, None)
    reading = read(carrier.format(n=name), arguments=sent)
    assert (reading.category, reading.argument) == ("missing_argument", name)


_BAD = (
    "Invalid value for parameter '{n}': {v}",
    "{n} must be a positive integer",
    "The '{n}' argument must be one of: a, b",
    "invalid {n}: {v}",
    "Unsupported value for '{n}'",
)


@_SETTINGS
@given(carrier=st.sampled_from(_BAD), name=_IDENTIFIER, value=_WORD)
def test_an_argument_name_is_matched_whole_not_by_a_part_the_call_also_has(
    carrier: str, name: str, value: str
) -> None:
    first = name.replace("-", "_").replace(".", "_").split("_")[0]
    sent = {name: value, first: value} if first != name else {name: value}
    reading = read(carrier.format(n=name, v=value), arguments=sent)
    assert (reading.category, reading.argument) == ("bad_argument", name)


# ------------------------------------------------------------ what the text tells the reader to call

_ASKS = (
    "call {t}",
    "Please call {t} first.",
    "Use the {t} tool to continue.",
    "You must invoke {t} before this.",
    "run {t} now",
    "Retry with the {t} tool.",
    "Before anything else, execute `{t}`.",
    "To fix this: {t}(force=true)",
)


@_SETTINGS
@given(
    carrier=st.sampled_from(_ASKS),
    tools=st.lists(_IDENTIFIER, min_size=1, max_size=5, unique=True),
    pick=st.integers(0, 4),
)
def test_a_tool_of_the_session_the_text_asks_for_is_an_instruction(
    carrier: str, tools: list[str], pick: int
) -> None:
    tool = tools[pick % len(tools)]
    found = read(f"Something went wrong. {carrier.format(t=tool)}", tools=tools).instruction
    assert found is not None and found.tool == tool


@_SETTINGS
@given(
    tools=st.lists(_IDENTIFIER, min_size=1, max_size=5, unique=True),
    arguments=st.dictionaries(_WORD, _WORD, max_size=3),
)
def test_a_tool_call_given_as_json_is_an_instruction_with_its_arguments(
    tools: list[str], arguments: dict[str, str]
) -> None:
    text = "Error: " + json.dumps({"tool": tools[-1], "arguments": arguments})
    found = read(text, tools=tools).instruction
    assert found is not None and (found.tool, dict(found.arguments)) == (tools[-1], arguments)


_NOT_ASKED = (
    "{t} failed: connect ECONNREFUSED 127.0.0.1:5432",
    "Do not call {t} again.",
    "Error while running {t}: boom",
    "The {t} tool is deprecated",
)


@_SETTINGS
@given(carrier=st.sampled_from(_NOT_ASKED), tools=st.lists(_IDENTIFIER, min_size=1, max_size=5, unique=True))
def test_a_tool_the_text_only_mentions_or_forbids_is_no_instruction(carrier: str, tools: list[str]) -> None:
    assert read(carrier.format(t=tools[0]), tools=tools).instruction is None
