"""Where a fault's text comes from: the libraries real MCP servers are built on, run on the call.

The rules, in one place:

* Every raising fault's text has a ``source`` (:data:`SOURCES`). ``template`` is the fault
  table's own wording (:mod:`harness.faults.kinds`), what every run before sources existed
  wrote; it stays so that those results can be made again. Every other source is a real
  server stack, and its text is made by running that stack's real library on the actual call:
* **Argument faults** (``bad_argument``, ``too_large``, ``schema_drift``): the call's real
  arguments are validated against the tool's schema with the constraint a real tool would
  declare for the argument (:func:`constrained_schema`); the validator's own error, wrapped as
  that stack wraps it, is the text. Under a real source the tool's validator, not the rule's
  ``valid`` value, decides whether a call fails: a value that satisfies the declared constraint
  goes through (and is judged against the task like any other).
* **Upstream faults** (``transient``, ``rate_limited``, ``timeout``, ``futile_outage``,
  ``post_commit``, ``permanent``): the tool's upstream HTTP call fails with a real ``httpx``
  exception (:func:`upstream_exception`: a 503, a 429 with ``Retry-After``, a read timeout, a
  dropped connection, a 410), and the text is what the stack makes of that exception.
* A stack's *wrapper* (the words around the library's text) is data below; the interop test
  ``tests/interop/test_sources_match_real_stacks.py`` runs the real stacks (the official
  Python SDK 1.x low-level server and 2.x ``MCPServer``, FastMCP) on the same tool and call and
  requires the same bytes.

The stacks:

``jsonschema``
    The official Python SDK 1.x low-level ``Server``: validates the arguments with
    ``jsonschema.validate`` against the inputSchema ("Input validation error: <message>") and
    answers any exception a tool raises with its ``str()``: the upstream's text passes through.
``pydantic``
    The official Python SDK 2.x ``MCPServer``: a pydantic model ``<tool>Arguments`` built from
    the tool function's signature ("Error executing tool <tool>: <pydantic error>"); any other
    exception is masked ("Error executing tool <tool>"): the reason is lost at the server.
``fastmcp``
    FastMCP 4: a pydantic ``TypeAdapter`` of the tool function (the error as pydantic prints
    it); an upstream 429 says "Rate limited by upstream API, please retry later", a timeout
    "Upstream request timed out, please retry", anything else
    "Error calling tool '<tool>': <exception>".

Misleading and adversarial qualities under a real source draw their text from a bank written in
many wordings (:mod:`harness.faults.harmful`), not from one template.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

if TYPE_CHECKING:  # httpx loads on first use: a worker that never needs a real source skips it
    import httpx


TEMPLATE = "template"

ARGUMENT_KINDS: frozenset[str] = frozenset({"bad_argument", "too_large", "schema_drift"})
"""Kinds whose text is a validator's: the call's arguments against the tool's (declared) schema."""

UPSTREAM_KINDS: frozenset[str] = frozenset(
    {"transient", "rate_limited", "timeout", "futile_outage", "post_commit", "permanent"}
)
"""Kinds whose text is what the stack makes of a real ``httpx`` exception from the upstream."""


# -- what a real tool declares ------------------------------------------------------------

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CODE = re.compile(r"^[A-Z]+$")
_PROPER = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)*$")

DECLARED_PATTERNS: tuple[tuple[re.Pattern[str], Callable[[str], str]], ...] = (
    (_ISO_DATE, lambda v: r"^\d{4}-\d{2}-\d{2}$"),
    (_CODE, lambda v: rf"^[A-Z]{{{len(v)}}}$"),
    (_PROPER, lambda v: r"^[A-Z][a-z]+(?: [A-Z][a-z]+)*$"),
)
"""The constraint a real tool declares for a string argument, by the shape of a value it accepts:
an ISO date (a date pattern), a code in capitals (that many capitals: a currency), a proper
name (capitalised words). Any other accepted value is declared as the one allowed value."""


def declared(value: Any) -> dict[str, Any]:
    """The JSON Schema keywords a real tool would declare for an argument that accepts ``value``."""
    if isinstance(value, str):
        for shape, pattern in DECLARED_PATTERNS:
            if shape.match(value):
                return {"pattern": pattern(value)}
    return {"enum": [value]}


def constrained_schema(
    schema: Mapping[str, Any], argument: str | None, *, valid: Any = None, maximum: float | None = None
) -> dict[str, Any]:
    """``schema`` with the constraint on ``argument`` that the rule stands for: the declared form
    of ``valid`` (:func:`declared`) or ``maximum``."""
    props = {k: dict(v) for k, v in (schema.get("properties") or {}).items()}
    if argument is not None and argument in props:
        if maximum is not None:
            props[argument]["maximum"] = maximum
        elif valid is not None:
            props[argument].update(declared(valid))
    return {**schema, "properties": props}


# -- validators, as each stack runs them ---------------------------------------------------

_PY_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


def _field(spec: Mapping[str, Any]) -> Any:
    """The pydantic annotation of one property: its type with the declared constraints."""
    from pydantic import Field

    kind = spec.get("type")
    base: Any = _PY_TYPES.get(kind, Any) if isinstance(kind, str) else Any
    if "enum" in spec:
        from typing import Literal

        base = Literal[tuple(spec["enum"])]
    limits = {
        name: spec[key]
        for key, name in (("pattern", "pattern"), ("maximum", "le"), ("minimum", "ge"))
        if key in spec
    }
    return Annotated[base, Field(**limits)] if limits else base


def _signature(schema: Mapping[str, Any]) -> inspect.Signature:
    """The tool function a Python server would have written for ``schema``: required parameters
    first (Python's rule), each annotated with its type and constraints, optional ones with their
    default (None where the schema gives none)."""
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    params = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=_field(spec))
        for name, spec in props.items()
        if name in required
    ] + [
        inspect.Parameter(
            name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=_field(spec),
            default=spec.get("default"),
        )
        for name, spec in props.items()
        if name not in required
    ]
    return inspect.Signature(params)


def _canonical(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=512)
def _pydantic_model(tool: str, schema_json: str) -> Any:
    """The official SDK's arguments model: ``create_model("<tool>Arguments", ...)`` from the signature."""
    from pydantic import create_model

    sig = _signature(json.loads(schema_json))
    fields: dict[str, Any] = {
        p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default)
        for p in sig.parameters.values()
    }
    return create_model(f"{tool}Arguments", **fields)


@functools.lru_cache(maxsize=512)
def _type_adapter(tool: str, schema_json: str) -> Any:
    """FastMCP's check: a pydantic ``TypeAdapter`` of a function named ``tool`` with the signature,
    validating the arguments as a dict."""
    from pydantic import TypeAdapter

    sig = _signature(json.loads(schema_json))

    def fn(*args: Any, **kwargs: Any) -> None:
        return None

    fn.__name__ = fn.__qualname__ = tool
    fn.__signature__ = sig  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()}
    adapter: Any = TypeAdapter(cast(Any, fn))  # a callable: pydantic validates a call of it
    return adapter


@functools.lru_cache(maxsize=512)
def _jsonschema_validator(schema_json: str) -> Any:
    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def pydantic_error(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """pydantic's text for ``arguments`` against the SDK's model of ``schema``; None if they pass."""
    from pydantic import ValidationError

    try:
        _pydantic_model(tool, _canonical(schema)).model_validate(dict(arguments))
    except ValidationError as exc:
        return str(exc)
    return None


def validate_call_error(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """pydantic's text for calling ``tool`` with ``arguments``, as FastMCP validates; None if they pass."""
    from pydantic import ValidationError

    try:
        _type_adapter(tool, _canonical(schema)).validate_python(dict(arguments))
    except ValidationError as exc:
        return str(exc)
    return None


def jsonschema_error(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """``jsonschema.validate``'s message (its best match) for ``arguments``; None if they pass."""
    import jsonschema

    error = jsonschema.exceptions.best_match(
        _jsonschema_validator(_canonical(schema)).iter_errors(dict(arguments))
    )
    return None if error is None else str(error.message)


# -- the upstream ---------------------------------------------------------------------------

UPSTREAM_HOST = "api.example.com"
"""Where the catalogue's tools get their data, in the URLs of upstream errors."""


def upstream_url(tool: str, arguments: Mapping[str, Any]) -> str:
    """The URL a tool would have asked: ``https://api.example.com/<tool>?<arguments>``."""
    import httpx

    return str(
        httpx.URL(f"https://{UPSTREAM_HOST}/v1/{tool}", params={k: str(v) for k, v in arguments.items()})
    )


_STATUS_OF: dict[str, int] = {"transient": 503, "futile_outage": 503, "rate_limited": 429, "permanent": 410}


def upstream_exception(
    kind: str, tool: str, arguments: Mapping[str, Any], retry_after_s: float | None = None
) -> httpx.HTTPError:
    """The real ``httpx`` exception a tool's upstream call raises for a fault of ``kind``."""
    import httpx

    request = httpx.Request("GET", upstream_url(tool, arguments))
    status = _STATUS_OF.get(kind)
    if status is not None:
        headers = {"Retry-After": f"{retry_after_s:g}"} if status == 429 and retry_after_s is not None else {}
        response = httpx.Response(status, headers=headers, request=request)
        try:
            response.raise_for_status()
        except httpx.HTTPStatusError as exc:
            return exc
        raise AssertionError(f"status {status} did not raise")  # pragma: no cover
    if kind == "timeout":
        return httpx.ReadTimeout("timed out", request=request)  # httpcore's text for a socket timeout
    if kind == "post_commit":
        # What httpcore says when the upstream closed the connection after taking the request.
        return httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
    raise ValueError(f"no upstream failure for fault kind {kind!r}")


# -- the stacks -----------------------------------------------------------------------------


# -- texts harvested from real servers ----------------------------------------------------

HARVESTED_CATEGORIES: dict[str, tuple[str, ...]] = {
    "transient": ("transient",),
    "futile_outage": ("transient",),
    "post_commit": ("transient",),
    "rate_limited": ("rate_limited",),
    "timeout": ("timeout",),
    "permanent": ("permanent", "not_found"),
}
"""The upstream kinds a harvested text can stand for, and the annotated categories it is drawn
from. Argument faults are not among them: a harvested text names another server's arguments."""

_CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "corpus"


def _dev(splits: str) -> set[str]:
    import tomllib

    return set(tomllib.loads((_CORPUS / splits).read_text(encoding="utf-8")).get("dev", []))


@functools.lru_cache(maxsize=1)
def harvested_texts() -> dict[str, tuple[str, ...]]:
    """Category -> the texts real servers and libraries wrote for it, from the corpus's ``dev``
    split only (docs/corpus.md): servers and providers outside the reader's ``train`` split, but
    looked at while it was written, so not held out. The ``heldout`` split is never used here:
    it is evaluated once, not served as fault texts. Read as data files, so the simulator imports
    nothing of the fixtures."""
    categories = {}
    for line in (_CORPUS / "annotations.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            categories[row["id"]] = row["category"]
    out: dict[str, list[str]] = {}
    servers = _dev("splits.toml")
    for line in (_CORPUS / "messages.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row["server"] in servers:
                out.setdefault(categories[row["id"]], []).append(row["text"])
    providers = _dev("library_splits.toml")
    for line in (_CORPUS / "library_texts.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row["provider"] in providers:
                out.setdefault(row["category"], []).append(row["text"])
    return {k: tuple(v) for k, v in out.items()}


def harvested_text(kind: str, pick: int) -> str | None:
    """The ``pick``-th (modulo) harvested text for a fault of ``kind``, or None where none fits."""
    texts = [t for c in HARVESTED_CATEGORIES.get(kind, ()) for t in harvested_texts().get(c, ())]
    return texts[pick % len(texts)] if texts else None


def fits(source: str, kind: str) -> bool:
    """Whether ``source`` has a text of its own for a fault of ``kind`` (harvested texts are for
    upstream kinds only; every other source writes every raising kind)."""
    return source != HARVESTED or kind in HARVESTED_CATEGORIES


@dataclass(frozen=True)
class Source:
    """One real stack: how it validates arguments and what it makes of an exception."""

    name: str
    stack: str
    """The server implementation whose wording this is."""
    does: str
    validate: Callable[[str, Mapping[str, Any], Mapping[str, Any]], str | None]
    """``(tool, schema, arguments) -> the validator's text, or None when they pass``."""
    wrap_invalid: Callable[[str, str], str]
    """``(tool, validator text) -> what the client sees``."""
    wrap_exception: Callable[[str, httpx.HTTPError], str]
    """``(tool, exception) -> what the client sees`` for an exception the tool raised."""
    vague: str
    """This stack's text that says something failed but not what: ``{tool}`` is the tool."""


def _fastmcp_exception(tool: str, exc: httpx.HTTPError) -> str:
    import httpx

    if isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code == 429:
        return "Rate limited by upstream API, please retry later"
    if isinstance(exc, httpx.TimeoutException):
        return "Upstream request timed out, please retry"
    return f"Error calling tool {tool!r}: {exc}"


HARVESTED = "harvested"
"""The source whose texts are real servers' own (:func:`harvested_text`), not a stack run here."""

SOURCES: dict[str, Source | None] = {
    TEMPLATE: None,
    HARVESTED: None,
    "jsonschema": Source(
        "jsonschema",
        "python-sdk-1 (low-level Server)",
        "jsonschema's message after 'Input validation error: '; an exception's str() as it is",
        lambda tool, schema, args: jsonschema_error(schema, args),
        lambda tool, text: f"Input validation error: {text}",
        lambda tool, exc: str(exc),
        "{tool} failed",
    ),
    "pydantic": Source(
        "pydantic",
        "python-sdk-2 (MCPServer)",
        "pydantic's error for the <tool>Arguments model, after 'Error executing tool <tool>: '; "
        "any other exception masked",
        pydantic_error,
        lambda tool, text: f"Error executing tool {tool}: {text}",
        lambda tool, exc: f"Error executing tool {tool}",
        "Error executing tool {tool}",
    ),
    "fastmcp": Source(
        "fastmcp",
        "fastmcp-4",
        "pydantic's error for call[<tool>] as it prints; 'Error calling tool ...: <exception>', with "
        "FastMCP's own words for an upstream 429 and timeout",
        validate_call_error,
        lambda tool, text: text,
        _fastmcp_exception,
        "Error calling tool '{tool}'",
    ),
}
"""Every source a fault's text can come from; ``template`` (None here) is the fault table's and
``harvested`` (None here) draws real servers' own texts."""

SOURCE_NAMES: tuple[str, ...] = tuple(SOURCES)


def argument_text(
    source: Source, tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]
) -> str | None:
    """What ``source``'s stack answers a call of ``tool`` with ``arguments`` against ``schema``;
    None when its validator lets the call through."""
    text = source.validate(tool, schema, arguments)
    return None if text is None else source.wrap_invalid(tool, text)


def upstream_text(
    source: Source, kind: str, tool: str, arguments: Mapping[str, Any], retry_after_s: float | None = None
) -> str:
    """What ``source``'s stack answers when the tool's upstream call fails as ``kind`` does."""
    return source.wrap_exception(tool, upstream_exception(kind, tool, arguments, retry_after_s))
