"""Validation errors in the words of the libraries that write them.

A validation library names the argument (a path) and, most of the time, the valid form; each
parser below knows one library's wording, from what those libraries are documented to say:

* zod 3 and zod 4 (TypeScript): ``Required at path``, ``Expected string, received number at
  path``, ``Invalid enum value. Expected 'a' | 'b', received 'c'``, ``Too big: expected number to
  be <=10``, the pretty form (``✖ message`` / ``→ at path``) and issue arrays sent as JSON;
* pydantic 2: ``N validation error(s) for Model``, then per issue the location on a line of its
  own and the message indented under it, ``[type=...]`` at its end;
* jsonschema (Python): ``'x' is a required property``, ``5 is not of type 'string'``, ``... is
  greater than the maximum of 3``; ajv (JavaScript): ``must have required property 'x'``;
* Go: mcp-go's ``required argument "x" not found``, encoding/json's ``cannot unmarshal string
  into Go struct field T.limit of type int``, jsonschema-go's ``missing properties: ["x"]``.

Every parser returns the issues in the order the text gives them; the first is what a reading
reports. A parser that recognises nothing returns an empty list, and the reader goes on to prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.reading._text import MAX_LINE, unwrap


@dataclass(frozen=True)
class Issue:
    """One validation problem: is the argument missing (else its value is bad), its path, and
    the valid form where the message states it."""

    missing: bool
    path: str | None
    expected: str | None


# ---------------------------------------------------------------------------- shared wording


_QUOTED_ITEM = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"|`([^`\n]*)`")
_SPLIT_OPTIONS = re.compile(r"\s*(?:\||,|\bor\b)\s*")


def options(raw: str) -> list[str]:
    """The choices of ``'a' | 'b'``, ``"a"|"b"``, ``['a', 'b']``, ``a, b or c``, in order."""
    raw = raw.strip().strip("[]()").strip()
    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED_ITEM.finditer(raw)]
    if quoted:
        return quoted
    return [p.strip() for p in _SPLIT_OPTIONS.split(raw) if p.strip()]


def one_of(items: Sequence[str]) -> str | None:
    return "one of: " + ", ".join(items) if items else None


_BOUND = re.compile(
    r"^(?:be\s+)?(?P<dir>greater|less|more|fewer|larger|smaller)\s+than\s+(?P<eq>or\s+equal\s+to\s+)?"
    r"(?P<n>-?[\d.,_]+(?:e[+-]?\d+)?)(?P<rest>.*)$",
    re.I,
)


def bound(phrase: str) -> str | None:
    """``greater than or equal to 1`` -> ``>= 1`` (and ``less than``, ``<``); None otherwise."""
    m = _BOUND.match(phrase.strip())
    if m is None:
        return None
    up = m["dir"].lower() in ("greater", "more", "larger")
    op = (">" if up else "<") + ("=" if m["eq"] else "")
    rest = m["rest"].strip().rstrip(".")
    return f"{op} {m['n'].rstrip('.,')}" + (f" {rest}" if rest and len(rest) < 30 else "")


def path_of(parts: Sequence[Any]) -> str | None:
    """A location as ``edits[0].oldText`` from its parts (``["edits", 0, "oldText"]``)."""
    out = ""
    for part in parts:
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            out += f"[{part}]"
        elif isinstance(part, str) and part:
            out += f".{part}" if out else part
    return out or None


def dotted(path: str) -> str | None:
    """``edits.0.oldText`` or ``/edits/0/oldText`` as ``edits[0].oldText``."""
    parts = [p for p in _PATH_SEPARATOR.split(path.strip().strip("'\"`")) if p]
    return path_of(parts)


_PATH_SEPARATOR = re.compile(r"[./]")
_ARTICLE = re.compile(r"^(?:an?|the)\s+", re.I)
_VALID = re.compile(r"^valid\s+", re.I)


def type_phrase(phrase: str) -> str:
    """``a valid integer`` -> ``integer``, ``a string or URL`` -> ``string or URL``."""
    phrase = _ARTICLE.sub("", phrase.strip())
    phrase = _VALID.sub("", phrase)
    return phrase.strip()


# ---------------------------------------------------------------------------- zod


_Z_REQUIRED = re.compile(r"^(?:invalid input:\s*)?required$", re.I)
_Z_TYPE = re.compile(
    r"^(?:invalid (?:input|type):\s*)?expected\s+(?P<exp>[^,\n]{1,200}?),\s*received\s+(?P<got>\S+)$", re.I
)
_Z_ENUM = re.compile(r"^invalid enum value\.\s*expected\s+(?P<opts>.{1,1000}?),\s*received\s+.*$", re.I)
_Z_OPTION = re.compile(
    r"^invalid (?:option|discriminator value|union discriminator)[:.]?\s*"
    r"expected\s+(?:one of\s+)?(?P<opts>.{1,1000})$",
    re.I,
)
_Z_LITERAL = re.compile(r"^invalid (?:literal value|input),?:?\s*expected\s+(?P<exp>.{1,200})$", re.I)
_Z_SIZE4 = re.compile(
    r"^too (?:big|small):\s*expected\s+(?P<what>\w+)\s+to\s+(?:be|have)\s+(?P<cmp>[<>]=?)\s*"
    r"(?P<n>-?[\d.]+(?:e[+-]?\d+)?)(?:\s+(?P<unit>[\w()]+))?$",
    re.I,
)
_Z_SIZE3 = re.compile(
    r"^(?P<what>array|string|number|set|bigint|date|file|map|value)\s+must\s+(?:contain|be|have)\s+(?P<rest>.{1,200})$",
    re.I,
)
_Z_PATTERN = re.compile(
    r"^invalid(?: string)?:\s*must\s+(?:match pattern|match|start with|end with|include)\s+(?P<p>.{1,500})$",
    re.I,
)
_Z_FORMAT = re.compile(r"^invalid\s+(?P<f>[A-Za-z][\w -]{0,30}?)$", re.I)
_Z_UNRECOGNIZED = re.compile(r"^unrecognized keys?(?:\(s\))?(?: in object)?:\s*(?P<keys>.{1,500})$", re.I)
_Z_NOT_FORMATS = {"input", "type", "arguments", "argument", "union", "string", "value", "params", "request"}


def zod_message(message: str) -> tuple[bool, str | None] | None:
    """(missing, expected) for a message in zod's words; None when it is not one."""
    msg = message.strip().rstrip(".")
    if _Z_REQUIRED.match(msg):
        return True, None
    if m := _Z_ENUM.match(msg):
        return False, one_of(options(m["opts"]))
    if m := _Z_TYPE.match(msg):
        got = m["got"].strip("'\".").lower()
        exp = m["exp"].strip()
        if "|" in exp:
            return got == "undefined", one_of(options(exp))
        return got == "undefined", exp.strip("'\"")
    if m := _Z_OPTION.match(msg):
        return False, one_of(options(m["opts"]))
    if m := _Z_LITERAL.match(msg):
        return False, m["exp"].strip()
    if m := _Z_SIZE4.match(msg):
        unit = m["unit"] if m["unit"] and m["what"].lower() not in ("number", "bigint", "date") else None
        return False, f"{m['cmp']} {m['n']}" + (f" {unit}" if unit else "")
    if m := _Z_SIZE3.match(msg):
        rest = m["rest"].strip()
        return False, bound(rest) or rest
    if m := _Z_PATTERN.match(msg):
        pattern = m["p"].strip()
        if len(pattern) > 1 and pattern[0] == "/" and pattern.rfind("/") > 0:
            pattern = pattern[1 : pattern.rfind("/")]
        return False, pattern
    if m := _Z_UNRECOGNIZED.match(msg):
        return False, None
    if m := _Z_FORMAT.match(msg):
        form = m["f"].strip()
        return False, None if form.lower() in _Z_NOT_FORMATS else form
    return None


_PATH = r"[A-Za-z_$][\w$-]*(?:\[\d+\]|\.[\w$-]+)*"
_AT_PATH = re.compile(rf"^(?P<msg>.+?)\s+at\s+(?:path\s+)?['\"`]?(?P<path>{_PATH})['\"`]?\s*[.;]?$")
_PATH_COLON = re.compile(rf"^(?:[^\n]{{0,200}}?:\s+)?['\"`]?(?P<path>{_PATH})['\"`]?\s*:\s+(?P<msg>.+)$")
_PRETTY_AT = re.compile(r"\n[ \t]*(?:→|->|=>)[ \t]*at[ \t]+")
_BULLET = re.compile(r"^[ \t]*(?:[✖×✗•*-]|\d+\.)[ \t]+")
_PIECES = re.compile(rf"[;,]\s+(?=['\"`]?{_PATH}['\"`]?:\s)|;\s+")
"""Where one line lists several issues: "a: Required, b: Required", "... at a; ... at b"."""
_NOT_PATHS = {
    "error",
    "errors",
    "exception",
    "warning",
    "message",
    "details",
    "detail",
    "fatal",
    "cause",
    "reason",
}


def _zod_lines(text: str) -> list[Issue]:
    text = _PRETTY_AT.sub(" at ", text)
    found: list[Issue] = []
    for raw in text.split("\n"):
        for piece in _PIECES.split(raw[:MAX_LINE]):
            line = _BULLET.sub("", unwrap(piece)).strip()
            if not line:
                continue
            issue = _zod_line(line)
            if issue is not None:
                found.append(issue)
    return found


def _zod_line(line: str) -> Issue | None:
    m = _AT_PATH.match(line)
    if m is not None and (said := zod_message(m["msg"])) is not None:
        path = dotted(m["path"])
        unrecognized = _Z_UNRECOGNIZED.match(m["msg"].strip())
        if unrecognized:
            keys = options(unrecognized["keys"])
            path = f"{path}.{keys[0]}" if keys and path else (keys[0] if keys else path)
        return Issue(said[0], path, said[1])
    m = _PATH_COLON.match(line)
    if m is not None and m["path"].lower() not in _NOT_PATHS:
        said = zod_message(m["msg"])
        if said is not None and not _Z_FORMAT.match(m["msg"].strip().rstrip(".")):
            return Issue(said[0], dotted(m["path"]), said[1])
    m = _Z_UNRECOGNIZED.match(line.rstrip("."))
    if m is not None:
        keys = options(m["keys"])
        return Issue(False, keys[0] if keys else None, None)
    return None


def _json_issue(item: dict[str, Any]) -> Issue:
    message = item.get("message", item.get("msg"))
    message = message if isinstance(message, str) else ""
    raw_path = item.get("path", item.get("loc"))
    if isinstance(raw_path, list):
        parts = [p for p in raw_path if isinstance(p, str | int) and p not in ("body", "query", "arguments")]
        path = path_of(parts)
    elif isinstance(raw_path, str):
        path = dotted(raw_path)
    else:
        path = None
    code = item.get("code", item.get("type"))
    received = item.get("received", item.get("input"))
    if code in ("invalid_type", "missing"):
        said = zod_message(message)
        missing = received == "undefined" or code == "missing" or (said is not None and said[0])
        expected = item.get("expected")
        return Issue(
            missing, path, str(expected) if isinstance(expected, str) else (said[1] if said else None)
        )
    choices = item.get("options", item.get("values"))
    if isinstance(choices, list) and choices:
        return Issue(False, path, one_of([str(c) for c in choices]))
    if code == "unrecognized_keys" and isinstance(item.get("keys"), list) and item["keys"]:
        key = str(item["keys"][0])
        return Issue(False, f"{path}.{key}" if path else key, None)
    said = zod_message(message) or pydantic_message(message, str(code) if isinstance(code, str) else None)
    return Issue(said[0], path, said[1])


def _json_issues(lists: Sequence[list[Any]]) -> list[Issue]:
    for items in lists:
        issues = [_json_issue(item) for item in items if isinstance(item, dict)]
        if issues:
            return issues
    return []


# ---------------------------------------------------------------------------- pydantic


_PYD_HEAD = re.compile(r"(?m)^[ \t]*\d+ validation errors? for [^\n]*$")
_PYD_ITEM = re.compile(
    r"(?m)^(?P<loc>[^\s][^\n]{0,300})\n[ \t]+(?P<msg>[^\n]{0,1000}?)"
    r"(?:[ \t]*\[type=(?P<type>[\w.:-]+)[^\n]*\])?[ \t]*$"
)
_PYD_MISSING = {
    "missing",
    "missing_argument",
    "missing_keyword_only_argument",
    "missing_positional_only_argument",
}
_P_SHOULD = re.compile(r"^(?:\w+\s+)?input should be\s+(?P<x>.+)$", re.I)
_P_HAVE = re.compile(
    r"^(?:string|list|tuple|set|frozenset|dictionary|value|bytes|array|data|object)\s+should\s+(?:have|be|match)\s+(?P<x>.+)$",
    re.I,
)
_P_PATTERN = re.compile(r"^(?:string\s+)?should match pattern\s+(?P<p>'.*'|\".*\")$", re.I)
_P_CUT = re.compile(
    r",\s+(?=(?:unable|got|input|relative|invalid|received|expected|the|must|but|not|found|because|"
    r"as|which|character|extra|unexpected|please|error|empty)\b)",
    re.I,
)


_AFTER_VALIDATION = re.compile(r"\s+after validation$")
_S_FORMAT = re.compile(
    r"^(?:in (?:the )?(?:format|form)(?: of)?|formatted as|of the (?:format|form)|in the form of)"
    r"\s+(?P<x>.+)$",
    re.I,
)
_S_EXAMPLE = re.compile(r"\b(?:like|such as|e\.g\.,?|for example,?)\s+(?P<x>['\"`]?[^\s'\"`]+['\"`]?)$", re.I)
_S_PATTERN = re.compile(r"^(?:match(?:ing)?\s+)?(?:the\s+)?pattern\s+(?P<p>'.*'|\".*\"|/.*/|\S+)$", re.I)
_S_LIST_GLUE = re.compile(r"[\s,|]|\bor\b")
_S_ONE_OF = re.compile(r"^one of[:\s]+(?P<x>.+)$", re.I)


def should_be(phrase: str) -> str | None:
    """The valid form from what follows "should be" / "must be"."""
    phrase = _P_CUT.split(phrase.strip(), maxsplit=1)[0].strip().rstrip(".")
    phrase = _AFTER_VALIDATION.sub("", phrase)
    if not phrase:
        return None
    if compared := bound(phrase):
        return compared
    if m := _S_FORMAT.match(phrase):
        return m["x"].strip("'\"`")
    if m := _S_EXAMPLE.search(phrase):
        return m["x"].strip("'\"`")
    if m := _S_PATTERN.match(phrase):
        return m["p"].strip("'\"")
    items = options(phrase)
    if items and _QUOTED_ITEM.search(phrase) and not _S_LIST_GLUE.sub("", _QUOTED_ITEM.sub("", phrase)):
        return one_of(items) if len(items) > 1 else items[0]
    if m := _S_ONE_OF.match(phrase):
        return one_of(options(m["x"]))
    return type_phrase(phrase) or None


def pydantic_message(message: str, kind: str | None = None) -> tuple[bool, str | None]:
    msg = message.strip()
    low = msg.lower()
    if (kind is not None and kind in _PYD_MISSING) or low.startswith(("field required", "missing required")):
        return True, None
    if m := _P_PATTERN.match(msg):
        return False, m["p"][1:-1]
    if m := _P_SHOULD.match(msg):
        return False, should_be(m["x"])
    if m := _P_HAVE.match(msg):
        return False, should_be(m["x"])
    return False, None  # "Value error, ...", "Extra inputs are not permitted": bad, form unstated


def _pydantic(text: str) -> list[Issue]:
    head = _PYD_HEAD.search(text)
    if head is None:
        return []
    found = []
    for m in _PYD_ITEM.finditer(text, head.end()):
        loc = m["loc"].strip()
        if _PYD_HEAD.match(loc) or loc.lower().startswith("for further information"):
            continue
        missing, expected = pydantic_message(m["msg"], m["type"])
        found.append(Issue(missing, dotted(loc.split(" ")[0]) if loc else None, expected))
    return found


# ---------------------------------------------------------------------------- jsonschema, ajv


_JS_REQUIRED = re.compile(r"^(?P<q>'[^'\n]{1,200}'|\"[^\"\n]{1,200}\") is a required property$")
_JS_TYPE = re.compile(r"^.{0,1000}? is not of type (?P<t>(?:'[^']{1,40}'(?:,\s*)?)+)$")
_JS_ENUM = re.compile(r"^.{0,1000}? is not one of (?P<o>\[.{0,1000}\])$")
_JS_BOUND = re.compile(
    r"^.{0,1000}? is (?P<dir>greater|less) than (?P<eq>or equal to )?the (?:maximum|minimum) of (?P<n>\S+)$"
)
_JS_PATTERN = re.compile(r"^.{0,1000}? does not match (?P<p>'.*'|\".*\")$")
_JS_BAD = re.compile(
    r"^.{0,1000}? (?:is too (?:short|long)|should be non-empty|is not valid under any of the given schemas|"
    r"is not a '(?P<f>[^']{1,40}')|is not allowed for .{0,200}|is a dependency of .{0,200})$"
)
_JS_ADDITIONAL = re.compile(r"^Additional properties are not allowed \((?P<q>'[^']{1,200}'|\"[^\"]{1,200}\")")
_AJV_REQUIRED = re.compile(r"must have required property ['\"](?P<p>[^'\"\n]{1,200})['\"]")
_AJV_MUST = re.compile(
    r"(?:^|\s|data)(?P<path>/[\w/~.-]*|\.[A-Za-z_][\w.\[\]]*)\s+must\s+(?P<x>[^,;\n]{1,200})"
)


def _jsonschema(text: str) -> list[Issue]:
    found = []
    for raw in text.split("\n"):
        line = unwrap(raw[:MAX_LINE]).strip()
        if m := _JS_REQUIRED.match(line):
            found.append(Issue(True, m["q"][1:-1], None))
        elif m := _JS_TYPE.match(line):
            found.append(Issue(False, None, " or ".join(options(m["t"]))))
        elif m := _JS_ENUM.match(line):
            found.append(Issue(False, None, one_of(options(m["o"]))))
        elif m := _JS_BOUND.match(line):
            up = m["dir"] == "greater"
            op = ("<" if up else ">") + ("" if m["eq"] else "=")
            found.append(Issue(False, None, f"{op} {m['n']}"))
        elif m := _JS_PATTERN.match(line):
            found.append(Issue(False, None, m["p"][1:-1]))
        elif m := _JS_ADDITIONAL.match(line):
            found.append(Issue(False, m["q"][1:-1], None))
        elif m := _JS_BAD.match(line):
            found.append(Issue(False, None, m["f"]))
        elif m := _AJV_REQUIRED.search(line):
            found.append(Issue(True, m["p"], None))
        elif m := _AJV_MUST.search(line):
            phrase = m["x"].strip()
            expected = None
            if phrase.lower().startswith("be ") and "allowed values" not in phrase:
                expected = should_be(phrase[3:])
            elif phrase.lower().startswith("match pattern"):
                expected = should_be(phrase)
            found.append(Issue(False, dotted(m["path"]), expected))
    return found


# ---------------------------------------------------------------------------- Go


_GO_REQUIRED = re.compile(
    r"required (?:argument|parameter) ['\"`](?P<p>[^'\"`\n]{1,200})['\"`] (?:not found|is missing|missing)"
)
_GO_NOT_TYPE = re.compile(r"argument ['\"`](?P<p>[^'\"`\n]{1,200})['\"`] is not an? (?P<t>[\w\[\]]{1,40})")
_GO_UNMARSHAL = re.compile(
    r"cannot unmarshal (?P<got>\w+) into Go (?:struct field (?P<f>[\w.\[\]]{1,300})|value) "
    r"of type (?P<t>[\w.\[\]*{}]{1,80})"
)
_GO_MISSING_PROPS = re.compile(r"missing propert(?:y|ies):?\s*\[?\s*['\"](?P<p>[^'\"\n]{1,200})['\"]")
_GO_WANT = re.compile(
    r"validating ['\"]?/properties/(?P<p>[^'\"/\s]{1,200})['\"]?[^\n]{0,300}?"
    r"\bwant ['\"]?(?P<t>[\w\[\]]{1,40})['\"]?"
)


def _go(text: str) -> list[Issue]:
    found: list[tuple[int, Issue]] = []
    for m in _GO_REQUIRED.finditer(text):
        found.append((m.start(), Issue(True, m["p"], None)))
    for m in _GO_MISSING_PROPS.finditer(text):
        found.append((m.start(), Issue(True, m["p"], None)))
    for m in _GO_NOT_TYPE.finditer(text):
        found.append((m.start(), Issue(False, m["p"], m["t"])))
    for m in _GO_UNMARSHAL.finditer(text):
        field = m["f"].split(".", 1)[1] if m["f"] and "." in m["f"] else m["f"]
        found.append((m.start(), Issue(False, dotted(field) if field else None, m["t"])))
    for m in _GO_WANT.finditer(text):
        found.append((m.start(), Issue(False, m["p"], m["t"])))
    return [issue for _, issue in sorted(found, key=lambda pair: pair[0])]


# ---------------------------------------------------------------------------- serde (Rust)

_SERDE_MISSING = re.compile(r"\bmissing field `(?P<p>[^`\n]{1,200})`")
_SERDE_UNKNOWN_FIELD = re.compile(
    r"\bunknown field `(?P<p>[^`\n]{1,200})`(?:, expected (?P<x>[^\n]{1,300}))?"
)
_SERDE_INVALID = re.compile(
    r"\binvalid (?:type|value|length): [^\n]{0,200}?, expected (?P<x>[^\n]{1,200}?)(?: at line \d+|$|\n)"
)
_SERDE_VARIANT = re.compile(r"\bunknown variant `(?P<v>[^`\n]{0,200})`, expected (?P<x>[^\n]{1,300})")


def _serde_expected(raw: str | None) -> str | None:
    """serde's "expected ..." in the reader's terms: ``one of `a`, `b``` as choices, a type as it is."""
    if raw is None:
        return None
    raw = re.sub(r" at line \d+ column \d+$", "", raw.strip())
    if raw.startswith(("one of", "`")):
        items = re.findall(r"`([^`]*)`", raw)
        return one_of(items) if items else None
    return type_phrase(raw) or raw


_NETWORKNT_MISSING = re.compile(r"\$\.(?P<p>[\w.\[\]$-]{1,200}): is missing but it is required")
_NETWORKNT_REQUIRED = re.compile(r"\$: required property '(?P<p>[^'\n]{1,200})' not found")
_NETWORKNT_TYPE = re.compile(r"\$\.(?P<p>[\w.\[\]$-]{1,200}): (?P<got>\w+) found, (?P<t>\w+) expected")


def _networknt(text: str) -> list[Issue]:
    """networknt's json-schema-validator (the Java SDK's): ``$.name: is missing but it is
    required``, ``$: required property 'name' not found``, ``$.count: string found, integer
    expected``."""
    found: list[tuple[int, Issue]] = []
    for pattern in (_NETWORKNT_MISSING, _NETWORKNT_REQUIRED):
        for m in pattern.finditer(text):
            found.append((m.start(), Issue(True, m["p"], None)))
    for m in _NETWORKNT_TYPE.finditer(text):
        found.append((m.start(), Issue(False, m["p"], m["t"])))
    return [issue for _, issue in sorted(found, key=lambda pair: pair[0])]


def _serde(text: str) -> list[Issue]:
    """serde_json's messages, as Rust servers (rmcp) pass them on: ``missing field `path```,
    ``unknown field `x`, expected one of ...``, ``invalid type: string "a", expected u32``."""
    found: list[tuple[int, Issue]] = []
    for m in _SERDE_MISSING.finditer(text):
        found.append((m.start(), Issue(True, m["p"], None)))
    for m in _SERDE_UNKNOWN_FIELD.finditer(text):
        found.append((m.start(), Issue(False, m["p"], _serde_expected(m["x"]))))
    for m in _SERDE_INVALID.finditer(text):
        found.append((m.start(), Issue(False, None, _serde_expected(m["x"]))))
    for m in _SERDE_VARIANT.finditer(text):
        found.append((m.start(), Issue(False, None, _serde_expected(m["x"]))))
    return [issue for _, issue in sorted(found, key=lambda pair: pair[0])]


# ---------------------------------------------------------------------------- all of them


def issues(text: str, issue_lists: Sequence[list[Any]]) -> list[Issue]:
    """The validation issues of ``text`` (already cleaned), the first library that recognises
    any; ``issue_lists`` are issue arrays found as JSON in the text."""
    if found := _json_issues(issue_lists):
        return found
    parsers: tuple[Callable[[str], list[Issue]], ...] = (
        _pydantic,
        _zod_lines,
        _jsonschema,
        _go,
        _serde,
        _networknt,
    )
    for parse in parsers:
        if found := parse(text):
            return found
    return []
