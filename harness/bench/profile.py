"""Where the time goes: one benchmark workload under pyinstrument, as a flat self-time list.

``python -m harness.bench.profile session --codec json`` runs the workload many
times under pyinstrument's sampling profiler (fine-grained interval) and prints
the functions that hold the most *self* time, which is what says where a
fast path spends its microseconds. The README's "Where the time goes" is this
command's output. Needs the dev extras (pyinstrument).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from harness.bench import workloads as w
from harness.protocol.memory import InMemoryTransport

Op = Callable[[], object]


def _scripted(codec: str) -> Op:
    from harness.session.simulated import run_session

    scenario = w.twenty_call_scenario()
    seeds = iter(range(10**9))
    return lambda: run_session(scenario, "naive", "is_error", next(seeds))


def _call(codec: str) -> Op:
    send = InMemoryTransport(w.demo_server(), codec).send
    return lambda: send(w.CALL_ADD)


WORKLOADS: dict[str, tuple[Callable[[str], Op], int]] = {
    "call": (_call, 200_000),
    "session": (lambda codec: w.our_session(codec), 20_000),
    "session-build": (lambda codec: w.our_session(codec, build=True), 20_000),
    "scripted-20": (_scripted, 2_000),
}
"""name -> (workload for a codec, default repetitions)."""


def profile(name: str, codec: str, repeat: int | None = None, top: int = 15) -> str:
    """The flat self-time listing of ``repeat`` runs of workload ``name``."""
    from pyinstrument import Profiler

    make, default = WORKLOADS[name]
    op = make(codec)
    op()  # warm caches (schema compilation, imports) outside the profile
    profiler = Profiler(interval=0.0001)
    profiler.start()
    for _ in range(repeat or default):
        op()
    profiler.stop()
    text = profiler.output_text(flat=True, show_all=True)
    here = Path(__file__).name
    rows: list[tuple[float, str]] = []
    for line in text.splitlines():
        seconds, _, where = line.strip().partition(" ")
        try:
            rows.append((float(seconds), where.strip()))
        except ValueError:
            continue  # pyinstrument's banner
    # This module's frames (the loop, and the profiler's overhead charged to it) are not
    # the workload's time; what is left is shown as a share of the workload.
    rows = [(t, where) for t, where in rows if here not in where]
    total = sum(t for t, _ in rows) or 1.0
    head = f"{name} ({codec}), {repeat or default} runs: self time of the top functions\n"
    body = "".join(f"{100 * t / total:5.1f}%  {where}\n" for t, where in rows[:top])
    return head + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.bench.profile", description=__doc__)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("--codec", default="json", help="json, orjson or msgspec (default json)")
    parser.add_argument("--repeat", type=int, default=None, help="runs to profile")
    parser.add_argument("--top", type=int, default=15, help="functions to show")
    args = parser.parse_args(argv)
    try:
        sys.stdout.write(profile(args.workload, args.codec, args.repeat, args.top))
    except ImportError as exc:
        parser.exit(2, f"{parser.prog}: {exc} (pip install -e '.[dev]')\n")
    except ValueError as exc:
        parser.exit(2, f"{parser.prog}: {exc}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
