"""What the stateless era costs on the wire: the same 20-call session's bytes and codec floor per era.

``python -m harness.bench.eras`` runs :func:`harness.bench.workloads.twenty_call_scenario` with
the ``naive`` agent in each era, reads its wire messages back from the trace and prints their
count and compact-JSON bytes (deterministic), the json codec alone on them (the floor, best of
seven) and the whole session's rate, in one process, so the eras' ratios come from one run. Every
stateless request carries its own ``_meta`` (version, capabilities, client) and every result its
``resultType`` and server stamp, so the floor alone bounds how close the eras can be.
"""

from __future__ import annotations

import argparse
import json
import timeit
from collections.abc import Iterator

from harness.bench.workloads import scripted_messages, twenty_call_scenario, wire_floor


def main(argv: list[str] | None = None) -> int:
    from harness.session.simulated import run_session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--number", type=int, default=200, help="sessions per timing (default 200)")
    args = parser.parse_args(argv)
    scenario = twenty_call_scenario()
    rates: dict[str, tuple[float, float]] = {}
    for era in ("handshake", "stateless"):
        messages = scripted_messages(scenario, era=era)
        size = sum(len(json.dumps(m, separators=(",", ":"))) for m in messages)
        floor = min(timeit.repeat(wire_floor("json", messages), number=args.number, repeat=7))
        seeds = iter(range(10**9))

        def one(era: str = era, seeds: Iterator[int] = seeds) -> object:
            return run_session(scenario, "naive", "is_error", next(seeds), era=era)

        whole = min(timeit.repeat(one, number=args.number // 4 or 1, repeat=5))
        rates[era] = (args.number / floor, (args.number // 4 or 1) / whole)
        print(
            f"{era}: {len(messages)} messages, {size:,} bytes; json codec alone "
            f"{rates[era][0]:,.0f}/s, session {rates[era][1]:,.0f}/s"
        )
    (hf, hs), (sf, ss) = rates["handshake"], rates["stateless"]
    print(f"stateless over handshake: codec alone {sf / hf:.2f}, session {ss / hs:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
