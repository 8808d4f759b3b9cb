"""The scripted ``reader``, taking a real server's plain-text answers as answers.

The shipped ``reader`` checks that every successful result holds a JSON object, as every tool
of the simulated catalogue answers, and takes anything else for a garbled answer (a
``malformed`` fault): it calls again, up to its attempts, then gives up. A real server's tool
may answer plain text (the reference filesystem server's ``write_file`` says ``Successfully
wrote to note.txt``), so against such a server the reader never gets past a write
(docs/real-servers.md). ``TextReader`` is the same reader with one change: a result is usable
when it is text, and not empty. Everything else (reading error texts, waiting out rate limits,
fixing named arguments, answering a server's question for an argument) is the reader's::

    harness run docs/examples/served_note.toml --agents reader,docs/examples/text_reader.py:TextReader

It is written outside the harness as any user's agent is (docs/agents.md), by file path.
"""

from __future__ import annotations

from typing import ClassVar

from harness.session.agent import Action, ToolResult
from scripted_agents.reader import ReaderAgent


class TextReader(ReaderAgent):
    """The reader, with any non-empty text answer taken as usable."""

    name: ClassVar[str] = "text_reader"
    summary: ClassVar[str] = "The reader, taking a non-empty text answer as usable (JSON or not)."
    checks_content: ClassVar[bool] = False  # its own check, below

    def on_success(self, obs: ToolResult) -> Action:
        usable = bool(obs.content) and all(b.get("type") == "text" for b in obs.content) and bool(obs.text)
        if not usable and self.phase != "verify":
            return self.on_garbled(obs)
        return super().on_success(obs)
