"""One digest of a sample of world sessions' rows and traces: the worlds' own proof that a speed
change changed no result (``harness/bench/fingerprint.py`` runs only the shipped scenarios).

The sample: the worlds' study's scenarios (``harness run --study --worlds``), for each suite and
condition (our upstream faults, each world event, each injection) the first ``--per`` of them in
the study's order, each run by every scripted agent under every strategy for ``--seeds`` seeds.
It prints how many sessions ran, the sha256 of their rows (every column but ``wall_time_s``, as
sorted-key JSON, in that order) and the sha256 of their trace hashes. ``--plain`` builds every
episode the plain way (:func:`harness.worlds.agentdojo.plain`: no snapshot, no shared parts, no
libyaml), so one tree proves its own shortcuts::

    python harness/bench/worlds_fingerprint.py
    python harness/bench/worlds_fingerprint.py --plain
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
from collections.abc import Iterator
from typing import Any

from harness.bench.fingerprint import _plain

LEFT_OUT = frozenset({"llm", "blind"})
"""Agents left out: ``llm`` calls a model endpoint; ``blind`` is another issue's, still moving."""


def sample(per: int = 2) -> list[str]:
    """The study's first ``per`` AgentDojo scenarios of each (suite, condition), in the study's
    order (BFCL's worlds have no snapshot path to check against a plain one)."""
    from harness.worlds import WORLD, world_of
    from harness.worlds.scenario import study_names

    taken: dict[tuple[str, str], int] = {}
    out: list[str] = []
    for name in study_names():
        if world_of(name) != WORLD or name.count("/") > 3:  # fault draw 0's sample: comparable across commits
            continue
        parts = name.split("/")
        key = (parts[1], parts[3] if len(parts) > 3 else "")
        if taken.get(key, 0) < per:
            taken[key] = taken.get(key, 0) + 1
            out.append(name)
    return out


@contextlib.contextmanager
def _path(plain: bool) -> Iterator[None]:
    """The plain path or the shortcut, each with an empty baseline cache (so neither reuses the
    other's fault-free baselines)."""
    from harness.worlds import agentdojo, session

    session._BASELINES.clear()
    agentdojo._verdicts.clear()
    with agentdojo.plain() if plain else contextlib.nullcontext():
        yield
    session._BASELINES.clear()
    agentdojo._verdicts.clear()


def rows(names: list[str], seeds: int, *, plain: bool = False) -> Iterator[dict[str, Any]]:
    """Each session's row (every column but ``wall_time_s``), in sample order."""
    from harness.protocol.strategies import STRATEGIES
    from harness.session.registry import list_agents
    from harness.worlds.scenario import load_world
    from harness.worlds.session import run_world_session

    agents = [a for a in list_agents() if a not in LEFT_OUT]
    with _path(plain):
        for name in names:
            scenario = load_world(name)
            for agent in agents:
                for strategy in STRATEGIES:
                    for seed in range(seeds):
                        result = run_world_session(scenario, agent, strategy, seed)
                        yield {k: _plain(v) for k, v in result.to_row().items() if k != "wall_time_s"}


def fingerprint(seeds: int = 1, per: int = 2, *, plain: bool = False) -> dict[str, Any]:
    names = sample(per)
    digest, traces = hashlib.sha256(), hashlib.sha256()
    sessions = 0
    for row in rows(names, seeds, plain=plain):
        digest.update(json.dumps(row, sort_keys=True, default=str).encode() + b"\n")
        traces.update(str(row["trace_hash"]).encode() + b"\n")
        sessions += 1
    return {
        "scenarios": len(names),
        "sessions": sessions,
        "rows_sha256": digest.hexdigest(),
        "traces_sha256": traces.hexdigest(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=1, help="seeds per cell (default 1)")
    parser.add_argument("--per", type=int, default=2, help="scenarios per suite and condition (default 2)")
    parser.add_argument("--plain", action="store_true", help="build every episode the plain way")
    args = parser.parse_args(argv)
    json.dump(fingerprint(args.seeds, args.per, plain=args.plain), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
