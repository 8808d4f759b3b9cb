"""Errors that belong to the user, not to the harness.

A :class:`UserError` is raised for a user's mistake (a broken scenario file, an
unknown agent name, a foreign results directory). The CLI prints its message as
one line and exits with status 2; no traceback reaches the user. Everything else
that escapes is a harness bug and is allowed to show its traceback.
"""

from __future__ import annotations

import difflib
import errno
from collections.abc import Iterable


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


def cannot_write(exc: OSError) -> bool:
    """Whether ``exc`` says the output cannot be written (:data:`CANNOT_WRITE`)."""
    return exc.errno in CANNOT_WRITE


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> UserError:
    """Build the error for an unknown registry name, suggesting the nearest valid ones."""
    choices = sorted(valid)
    near = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    return UserError(f"unknown {kind} {name!r}{hint} (valid: {', '.join(choices)})")
