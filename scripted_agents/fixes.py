"""How a scripted agent turns what an error says an argument should be into a value to send.

A reader (:mod:`harness.reading`) takes ``expected`` from an error text in the text's own terms:
a value (``2025-03-14``, ``'NOK'``), a bound (``<= 10``, ``at most 5``, ``less than or equal to
3``), a pattern (``^\\d{4}-\\d{2}-\\d{2}$``), a format (``YYYY-MM-DD``), a choice (``one of: EUR,
NOK``) or a type (``integer``). :func:`fix_value` makes a value from that and from the value the
call sent, as a careful person would: the bound itself, the sent value rewritten until it fits the
pattern or format (upper case, capitalised, a date reordered), the choice that matches the sent
value, the sent value as that type. It knows nothing of how the error was made; where nothing it
tries fits, it gives None and the agent falls back on guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

_NUMBER = r"-?\d+(?:\.\d+)?"

_UPPER_BOUND = re.compile(
    rf"(?:<=|≤|=<|at most|no more than|not more than|less than or equal to|maximum(?: of| is)?|"
    rf"max(?:imum)?(?: value)?\s*[:=]?|up to)\s*({_NUMBER})",
    re.I,
)
_LOWER_BOUND = re.compile(
    rf"(?:>=|≥|=>|at least|no less than|not less than|greater than or equal to|minimum(?: of| is)?|"
    rf"min(?:imum)?(?: value)?\s*[:=]?)\s*({_NUMBER})",
    re.I,
)
_STRICT_BELOW = re.compile(rf"(?:<|less than|below|under)\s*({_NUMBER})", re.I)
_CHOICE = re.compile(
    r"(?:one of|any of|must be(?: one of)?|allowed(?: values)?|valid values(?: are)?)\s*[:\[(]?\s*(.+)", re.I
)
_FORMAT_LETTERS = re.compile(r"^[YMDHhmsTZ:/ .\-]+$")
_TYPES: dict[str, Callable[[Any], Any]] = {
    "integer": lambda v: int(float(v)),
    "int": lambda v: int(float(v)),
    "number": float,
    "float": float,
    "string": str,
    "str": str,
    "boolean": lambda v: str(v).strip().lower() in ("true", "1", "yes"),
    "bool": lambda v: str(v).strip().lower() in ("true", "1", "yes"),
}


def fix_value(current: Any, expected: str | None, kind: str | None = None, *, rewrite: bool = True) -> Any:
    """A value for an argument that sent ``current`` and must be ``expected``; None if no fix.

    ``kind`` is the argument's JSON Schema type where the tool lists it (a bound becomes an
    integer for an integer argument). ``rewrite=False`` leaves out the one fix that rewrites the
    sent value until it fits a pattern or format (:func:`_rewrites`: the case and date rewrites
    that undo what the families' ``bad_argument`` writes; docs/study.md measures what that
    pairing carries); the others stay.
    """
    if not expected:
        return None
    text = expected.strip()
    for bound in (_UPPER_BOUND, _LOWER_BOUND):
        m = bound.search(text)
        if m:
            return _as(kind, m.group(1))
    m = _STRICT_BELOW.search(text)
    if m:
        number = float(m.group(1))
        return _as(kind, str(number - 1 if kind == "integer" else number - 0.01))
    if text.lower() in _TYPES and current is not None:
        try:
            return _TYPES[text.lower()](current)
        except (TypeError, ValueError):
            return None
    pattern = _pattern(text)
    if pattern is not None:
        return next((c for c in _rewrites(current) if pattern.fullmatch(c)), None) if rewrite else None
    m = _CHOICE.search(text)
    if m:
        options = [o.strip().strip("'\"`") for o in re.split(r",|\bor\b|\|", m.group(1).rstrip(")]."))]
        options = [o for o in options if o]
        if options:
            same = [o for o in options if isinstance(current, str) and o.lower() == current.lower()]
            return _as(kind, same[0] if same else options[0])
    quoted = re.findall(r"['\"`]([^'\"`]+)['\"`]", text)
    if len(quoted) == 1:  # one quoted value in the text: the value it names
        return _as(kind, quoted[0])
    if " " not in text:  # one bare token: the value itself
        return _as(kind, text)
    return None


def _as(kind: str | None, value: str) -> Any:
    """``value`` as the argument's type (a number for a number, else the text)."""
    try:
        if kind == "integer":
            return int(float(value))
        if kind == "number":
            return float(value)
    except ValueError:
        return None
    return value


def _pattern(text: str) -> re.Pattern[str] | None:
    """A regular expression the text gives, or the one a format like ``YYYY-MM-DD`` means."""
    if text.startswith("^") or text.endswith("$") or "\\d" in text or "[A-Z" in text or "[a-z" in text:
        try:
            return re.compile(text)
        except re.error:
            return None
    if _FORMAT_LETTERS.match(text) and any(ch in text for ch in "YMD"):
        return re.compile("".join(r"\d" if ch in "YMDHhms" else re.escape(ch) for ch in text))
    return None


def _rewrites(current: Any) -> Iterator[str]:
    """The sent value and the rewrites a person tries on it: case, and dates reordered."""
    if current is None:
        return
    value = str(current)
    yield from (value, value.upper(), value.capitalize(), value.title(), value.lower())
    parts = re.split(r"[/.\- ]", value)
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        a, b, c = parts
        for year, month, day in ((c, b, a), (c, a, b), (a, b, c)):
            if len(year) == 4 and 1 <= int(month) <= 12 and 1 <= int(day) <= 31:
                yield f"{year}-{int(month):02d}-{int(day):02d}"
                yield f"{year}{int(month):02d}{int(day):02d}"
                yield f"{int(day):02d}/{int(month):02d}/{year}"
