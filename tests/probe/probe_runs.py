"""Probes of real server processes, started together once per test session (see conftest.py).

Each probe takes a few seconds of waiting (timeouts are the point), so every
probe the tests need is submitted to one thread pool the first time any test
asks for one, and tests wait only for their own. Timeouts are short for the
misbehaving peers (they are expected to run out) and generous for servers
that answer (so a loaded machine cannot turn a reply into "no reply").
"""

from __future__ import annotations

import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from harness.probe import ProbeConfig, Report, ToolCase, run_probe

PEERS = Path(__file__).resolve().parent.parent / "peers"
HARNESS = (sys.executable, "-m", "harness.cli.main")
ATLANTIS = (ToolCase("weather", {"city": "Atlantis"}),)


def demo(strategy: str) -> tuple[str, ...]:
    return (*HARNESS, "serve", "--demo", "--strategy", strategy)


def peer(name: str) -> tuple[str, ...]:
    return (sys.executable, str(PEERS / f"{name}.py"))


def answering(command: tuple[str, ...], tools: tuple[ToolCase, ...] = ATLANTIS) -> ProbeConfig:
    """A server expected to answer: generous waits, so load cannot turn a reply into silence."""
    return ProbeConfig(command, tools, timeout=5.0, startup_timeout=30.0)


def misbehaving(name: str, startup_timeout: float = 30.0) -> ProbeConfig:
    """A peer expected to fail every step: a short step timeout, since that is what each row costs."""
    return ProbeConfig(peer(name), ATLANTIS, timeout=1.0, startup_timeout=startup_timeout)


DUAL_OPEN: tuple[tuple[str, ...], ...] = (
    (),
    ("--bare", "-32002"),
    ("--bare", "-32600"),
    ("--no-handshake", "--bare", "-32602"),
    ("--no-handshake",),
)
"""The ways ``dual_open_server.py`` is run: which eras it speaks, and what it does before initialize."""

DELETE_FILE = ToolCase("delete_file", {"path": "notes.txt"})
"""The SDK peer's tool that asks for input (``--input-tools``): MRTR in the 2026-07-28 era."""

PROBES: dict[str, ProbeConfig] = {
    **{s: answering(demo(s)) for s in ("is_error", "masked", "collapse", "escape")},
    "is_error#again": answering(demo("is_error")),
    "paged": answering((*demo("is_error"), "--page-size", "1"), ()),
    # The SDK never answers three of the rules, so its step timeout is what those rows cost (in
    # parallel); 6 s, because a loaded machine can take more than 3 s for its raising tool's call.
    "sdk": ProbeConfig(
        (*peer("sdk_server"), "--input-tools"), (*ATLANTIS, DELETE_FILE), timeout=6.0, startup_timeout=30.0
    ),
    # Silence costs the whole start-up wait; any output (garbage, end of file) ends it early.
    "silent": misbehaving("silent_server", startup_timeout=1.0),
    "garbage": misbehaving("garbage_server"),
    "exit": misbehaving("exit_server"),
    # Issue 20's defects, each against a peer that reproduces it.
    # Its first two replies come after their waits: the 10 s start-up wait, then a 1 s step wait.
    "held": ProbeConfig(peer("held_server"), ATLANTIS, timeout=1.0, startup_timeout=10.0),
    "slow": ProbeConfig((*peer("slow_server"), "2"), ATLANTIS, timeout=5.0, startup_timeout=60.0),
    # Long waits on purpose: a server that exits must be reported from its exit, not a timeout.
    "orphan": ProbeConfig(peer("orphan_server"), ATLANTIS, timeout=30.0, startup_timeout=30.0),
    "list_typed": answering(peer("list_typed_server"), ()),
    # Issue 25's: a tool that fails whatever its arguments, and a dual-era server with no gate.
    "refused": answering(peer("refused_server"), ()),
    "refused_chromium": answering(
        (*peer("refused_server"), "--message", "Chromium distribution 'chrome' is not found"), ()
    ),
    "refused_validate": answering((*peer("refused_server"), "--validate"), ()),
    **{
        f"dual_open {' '.join(argv)}".strip(): answering((*peer("dual_open_server"), *argv), ())
        for argv in DUAL_OPEN
    },
}
"""Every probe the tests read, by name."""


class Probes:
    """Futures of the probes in :data:`PROBES`; ``get`` waits for one."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self._futures: dict[str, Future[Report]] = {
            name: pool.submit(run_probe, config) for name, config in PROBES.items()
        }

    def get(self, name: str) -> Report:
        return self._futures[name].result(timeout=240)
