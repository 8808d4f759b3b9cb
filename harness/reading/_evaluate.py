"""Measuring the reader against hand annotations, field by field.

The records are anything with the attributes of an annotated message (``text``, ``arguments``,
``stack`` and the five annotated fields), such as ``harness.fixtures.corpus.CorpusMessage`` or
``LibraryText`` (whose ``stack`` is its ecosystem); this module does not import the corpus (the
reader stays a leaf), the CLI hands it the records.

How a reading agrees with an annotation, field by field:

* ``category``, ``actionable``: equal.
* ``argument``: equal strings, or both null.
* ``expected``: both null, or equal after :func:`normalise_expected` (case, quotes, articles and
  "valid" dropped; comparison words as symbols; the choices of "one of" as a set; a few type
  names that mean the same JSON type, such as ``int``/``integer``, made one).
* ``retry_after_s``: both null, or within 0.5 s of each other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from harness.reading._model import Reading
from harness.reading._reader import read

FIELDS: tuple[str, ...] = ("category", "argument", "expected", "retry_after_s", "actionable")
"""The annotated fields, in the order they are reported."""

RETRY_TOLERANCE_S = 0.5


class Annotated(Protocol):
    """An error text with its hand annotation (the attributes :func:`evaluate` reads)."""

    @property
    def text(self) -> str: ...
    @property
    def arguments(self) -> Any: ...
    @property
    def stack(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def argument(self) -> str | None: ...
    @property
    def expected(self) -> str | None: ...
    @property
    def retry_after_s(self) -> float | None: ...
    @property
    def actionable(self) -> bool: ...


_COMPARISONS = (
    ("greater than or equal to", ">="),
    ("less than or equal to", "<="),
    ("at least", ">="),
    ("at most", "<="),
    ("no more than", "<="),
    ("no less than", ">="),
    ("greater than", ">"),
    ("less than", "<"),
)
_SAME_TYPE = {
    "int": "integer",
    "int64": "integer",
    "int32": "integer",
    "bool": "boolean",
    "str": "string",
    "dict": "object",
    "dictionary": "object",
    "map": "object",
    "mapping": "object",
    "list": "array",
    "float": "number",
    "float64": "number",
    "double": "number",
}


def normalise_expected(value: str) -> str:
    """The form two ``expected`` values are compared in (see the module's docstring)."""
    s = re.sub(r"[\"'`]", "", value.strip().lower()).replace("(s)", "s")
    s = re.sub(r"\s+", " ", s).strip().rstrip(".!,;:").strip()
    for words, symbol in _COMPARISONS:
        s = s.replace(words, symbol)
    s = re.sub(r"([<>]=?)\s*", r"\1 ", s)
    s = re.sub(r"^(?:(?:an?|the)\s+)?(?:valid\s+)?", "", s)
    if s.startswith("one of"):
        items = [
            p.strip()
            for p in re.split(r"\s*(?:,|\||\bor\b)\s*", s[len("one of") :].lstrip(": "))
            if p.strip()
        ]
        s = "one of: " + ", ".join(sorted(set(items)))
    return _SAME_TYPE.get(s, s)


def same_expected(found: str | None, annotated: str | None) -> bool:
    if found is None or annotated is None:
        return found is None and annotated is None
    return normalise_expected(found) == normalise_expected(annotated)


def agrees(field: str, reading: Reading, record: Annotated) -> bool:
    """Does ``reading`` agree with ``record``'s annotation on ``field``?"""
    if field == "expected":
        return same_expected(reading.expected, record.expected)
    if field == "retry_after_s":
        a, b = reading.retry_after_s, record.retry_after_s
        if a is None or b is None:
            return a is None and b is None
        return abs(a - b) <= RETRY_TOLERANCE_S
    if field not in FIELDS:
        raise ValueError(f"unknown field {field!r} (valid: {', '.join(FIELDS)})")
    return bool(getattr(reading, field) == getattr(record, field))


@dataclass(frozen=True)
class FieldScore:
    """How many readings agree with the annotation on one field, out of how many."""

    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else math.nan

    def to_json(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "total": self.total,
            "accuracy": round(self.accuracy, 4) if self.total else None,
        }


@dataclass(frozen=True)
class Evaluation:
    """Per-field agreement over a set of annotated texts, overall and per stack."""

    split: str
    messages: int
    overall: Mapping[str, FieldScore]
    by_stack: Mapping[str, Mapping[str, FieldScore]]

    def to_json(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "messages": self.messages,
            "fields": list(FIELDS),
            "overall": {f: s.to_json() for f, s in self.overall.items()},
            "by_stack": {
                stack: {
                    "messages": next(iter(scores.values())).total,
                    **{f: s.to_json() for f, s in scores.items()},
                }
                for stack, scores in self.by_stack.items()
            },
        }


def _reading(record: Annotated) -> Reading:
    arguments = record.arguments if isinstance(record.arguments, Mapping) else None
    return read(record.text, arguments=arguments)


def evaluate(records: Iterable[Annotated], *, split: str = "") -> Evaluation:
    """Read every record's text (with its call's arguments) and count agreements per field."""
    counts: dict[str, dict[str, list[int]]] = {}
    total: dict[str, list[int]] = {f: [0, 0] for f in FIELDS}
    n = 0
    for record in records:
        n += 1
        reading = _reading(record)
        per_stack = counts.setdefault(record.stack, {f: [0, 0] for f in FIELDS})
        for field in FIELDS:
            hit = int(agrees(field, reading, record))
            for tally in (total[field], per_stack[field]):
                tally[0] += hit
                tally[1] += 1
    return Evaluation(
        split=split,
        messages=n,
        overall={f: FieldScore(*total[f]) for f in FIELDS},
        by_stack={stack: {f: FieldScore(*c[f]) for f in FIELDS} for stack, c in counts.items()},
    )


def disagreements(records: Iterable[Annotated]) -> Iterator[tuple[Annotated, Reading, list[str]]]:
    """Each record the reader disagrees with, its reading, and the fields it gets wrong."""
    for record in records:
        reading = _reading(record)
        wrong = [f for f in FIELDS if not agrees(f, reading, record)]
        if wrong:
            yield record, reading, wrong
