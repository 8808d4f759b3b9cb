"""A reading of the harness's own template texts, for tests that show a mechanism.

The scripted agents read error text with :mod:`harness.reading`, which never saw the templates
and is measured on real servers' errors. A test that shows what an agent *does* with a given
meaning (a misleading "permanently unavailable" sends it to another tool; ``trust=verify``
checks a claim first) must not depend on how well that reader happens to read a template, or it
would assert the reader's accuracy instead of the mechanism. Such a test installs this table,
which reads each template the way its words plainly say.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

import pytest

from harness.reading import Reading

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"retry after (?P<wait>\d+(?:\.\d+)?) ?s"), "rate_limited"),
    (
        re.compile(r"invalid argument '(?P<argument>\w+)'.*expected form '(?P<expected>[^']*)'"),
        "bad_argument",
    ),
    (re.compile(r"set '(?P<argument>\w+)' to at most (?P<expected>\d+(?:\.\d+)?)"), "bad_argument"),
    (re.compile(r"missing required argument '(?P<argument>\w+)'"), "missing_argument"),
    (re.compile(r"permanently unavailable|retired"), "permanent"),
    (re.compile(r"timed out"), "timeout"),
    (re.compile(r"temporary|try again|\b503\b"), "transient"),
)


def template_read(
    text: str | None, *, arguments: Mapping[str, Any] | None = None, tools: Collection[str] | None = None
) -> Reading:
    for pattern, category in _RULES:
        m = pattern.search(text or "")
        if m is None:
            continue
        said = m.groupdict()
        expected = said.get("expected")
        if category == "bad_argument" and expected is not None and "at most" in m.group(0):
            expected = f"at most {expected}"
        wait = float(said["wait"]) if said.get("wait") else None
        return Reading(category, said.get("argument"), expected, wait, True, None)
    return Reading("unknown", None, None, None, False, None)


@pytest.fixture
def templates_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Install :func:`template_read` as the scripted agents' reader for one test."""
    import scripted_agents.base as base

    monkeypatch.setattr(base, "read_memo", template_read)
