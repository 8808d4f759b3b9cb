"""Deterministic stand-ins for a session, to test and measure the batch machinery alone.

``fake_session`` returns a row computed from the cell (no protocol, no agent),
so a batch of it isolates the runner: chunking, executors, resume, crash
handling. Agent names choose misbehaviour: ``crasher`` raises inside the
harness, ``killer`` ends its worker process with ``os._exit``, ``sleeper``
takes a few milliseconds (to give a kill test something to interrupt).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FakeResult:
    row: dict[str, Any]

    def to_row(self) -> dict[str, Any]:
        return dict(self.row)


def fake_loader(source: str, params: tuple[tuple[str, Any], ...]) -> Any:
    return (source, params)


def fake_session(
    scenario: Any,
    agent: str,
    strategy: str,
    seed: int,
    *,
    codec: str = "json",
    trace: Any = None,
    host: str = "typical",
) -> FakeResult:
    name, params = scenario
    if agent == "crasher" and seed % 3 == 1:
        raise RuntimeError(f"fake harness bug in {name} seed {seed}")
    if agent == "killer" and seed == 2:
        os._exit(3)
    if agent == "sleeper":
        time.sleep(0.01)
    digest = hashlib.sha256(f"{name}|{agent}|{strategy}|{seed}|{params}".encode()).digest()
    success = digest[0] % 4 != 0 if strategy == "is_error" else digest[0] % 2 == 0
    if trace is not None:
        trace.write(b'{"fake":true}\n')
    return FakeResult(
        {
            "scenario": name,
            "agent": agent,
            "strategy": strategy,
            "host": host,
            "seed": seed,
            "status": "ok",
            "success": success,
            "steps": digest[1] % 20,
            "recoveries": int(success),
            "recovery_opportunities": 1,
            "recover_steps": [digest[2] % 5] if success else [],
            "repeated_failing_calls": digest[3] % 3,
            "fault_schedule_hash": hashlib.sha256(f"{name}|{agent}|{seed}".encode()).hexdigest(),
            "wall_time_s": time.perf_counter() % 1,
        }
    )


def kill_grid() -> Any:
    """The grid that the kill-and-resume tests interrupt: 300 quick fake sessions."""
    from harness.grid import Grid

    return Grid(
        ("s1", "s2"), ("sleeper", "a"), ("is_error", "masked", "collapse"), ("typical",), tuple(range(25))
    )


def fake_options() -> Any:
    from harness.batch import SessionOptions

    return SessionOptions(session_fn="harness.fakes:fake_session", loader="harness.fakes:fake_loader")


def main(argv: list[str]) -> None:
    """``python -m harness.fakes OUT``: run (or resume, if OUT has a manifest) the kill grid serially."""
    from pathlib import Path

    from harness.batch import run_batch

    out = Path(argv[0])
    run_batch(
        kill_grid(), out, executor="serial", options=fake_options(), resume=(out / "manifest.json").exists()
    )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
