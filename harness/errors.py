"""Errors that belong to the user, not to the harness.

A :class:`UserError` is raised for a user's mistake (a broken scenario file, an
unknown agent name, a foreign results directory). The CLI prints its message as
one line and exits with status 2; no traceback reaches the user. Everything else
that escapes is a harness bug and is allowed to show its traceback.
"""

from __future__ import annotations

import difflib
import errno
import json
import tomllib
from collections.abc import Iterable
from typing import Any


class UserError(Exception):
    """A mistake in what the user asked for; the message says what and where."""

    exit_code = 2


class OutputError(UserError):
    """What the harness was asked to write cannot be written (a full disk, a read-only file
    system): one line, exit 1. Whatever was written before is kept; the message says how to
    go on."""

    exit_code = 1


CANNOT_WRITE: frozenset[int] = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})
"""The errnos that say the output cannot be written where it goes, whatever the harness does."""


_BREAKS = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in
           (*range(0x09), *range(0x0A, 0x20), 0x7F, 0x85, 0x2028, 0x2029)}  # fmt: skip
"""What ``str.splitlines`` would break at, and every other control character but a tab, as its escape."""


def one_line(text: str) -> str:
    """``text`` as one printable line: a user's file can put a newline or a control character
    into a name an error quotes (a TOML key, a tool name), and the contract is one line."""
    return text.translate(_BREAKS)


def cannot_write(exc: OSError) -> bool:
    """Whether ``exc`` says the output cannot be written (:data:`CANNOT_WRITE`)."""
    return exc.errno in CANNOT_WRITE


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> UserError:
    """Build the error for an unknown registry name, suggesting the nearest valid ones."""
    choices = sorted(valid)
    near = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    return UserError(f"unknown {kind} {name!r}{hint} (valid: {', '.join(choices)})")


NESTED_TOO_DEEPLY = "nested too deeply (arrays or tables inside one another past what can be read)"


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads``, with a document nested past the interpreter's recursion limit refused as
    a :class:`tomllib.TOMLDecodeError`, which every reader of a user's file already turns into one
    line naming the file (a RecursionError would reach the user as thousands of lines)."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(NESTED_TOO_DEEPLY) from None


def loads_json(text: str | bytes) -> Any:
    """``json.loads``, with a document nested too deeply refused as a ``ValueError`` (what every
    reader of a user's JSON already catches), and a number written past a float's range
    (``1e999``) refused, not read as infinity. ``NaN`` and ``Infinity`` stay readable: Python's
    own ``json.dumps`` writes them."""
    try:
        return json.loads(text, parse_float=_finite)
    except RecursionError:
        raise ValueError(NESTED_TOO_DEEPLY) from None


def _finite(token: str) -> float:
    value = float(token)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number out of range: {token[:40]}")
    return value
