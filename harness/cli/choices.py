"""Command-line choices among registry names that, when mistyped, suggest the nearest.

``click.Choice`` answers a typo with the whole list; a user who typed
``is_eror`` wants to read ``did you mean 'is_error'?``. :class:`NameChoice`
keeps click's behaviour (exit 2, usage line) and words the error as
:func:`harness.errors.unknown_name` does everywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from harness.errors import unknown_name


class NameChoice(click.Choice):  # type: ignore[type-arg,unused-ignore]
    """One of ``choices``; an unknown value fails with the nearest valid names."""

    def __init__(self, kind: str, choices: Sequence[str]) -> None:
        super().__init__(list(choices))
        self.kind = kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            self.fail(str(unknown_name(self.kind, str(value), map(str, self.choices))), param, ctx)
