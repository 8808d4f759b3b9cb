"""One digest of a grid's rows and traces: the proof that a speed change changed no result.

Runs every shipped scenario x every scripted agent x every strategy x both hosts x both eras x
``--seeds`` seeds, in this process, one session after another, and prints how many sessions ran,
the sha256 of their rows (every column but ``wall_time_s``, in grid order, as sorted-key JSON)
and the sha256 of their trace hashes (each session's ``trace_hash``: the sha256 of its wire
trace, byte for byte). The same digests before and after a change mean every row and every
trace is identical.

It only uses what every version of the harness since the stateless era has (``run_session``,
``list_scenarios``, ``list_agents``, ``STRATEGIES``, ``HOSTS``), so the same file proves two
commits: put the tree to check first on ``PYTHONPATH``::

    git worktree add /tmp/before <commit>
    PYTHONPATH=/tmp/before python harness/bench/fingerprint.py --seeds 3
    python harness/bench/fingerprint.py --seeds 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from typing import Any

_LLM = {"llm"}
"""Agents left out: they call a model endpoint."""

LATER_AGENTS: frozenset[str] = frozenset({"blind"})
"""Agents registered after this file was first written (``blind``, issue 41): left out, as a later
column is, so that digests from before and after they were added compare; ``--all-agents``
hashes them too."""

LATER_COLUMNS: dict[str, Any] = {
    "judge": "harness", "injection": "", "security_breached": False, "processes_ended": 0,
}  # fmt: skip
"""Columns added after this file was first written, with the value every shipped scenario's row
holds in them: such a column is left out of the digest while it holds that value (so digests
from before and after it was added compare), and hashed as any other when it holds another."""


SCENARIO_COLUMNS: frozenset[str] = frozenset({"max_steps"})
"""Columns added later that copy a field of the scenario (its step budget), not anything the
session did: always left out of the digest, so that digests from before and after they were added
compare."""

_UNSET = object()


def _plain(value: Any) -> Any:
    """A row value as JSON can hold it the same way every time (NaN as a string)."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if hasattr(value, "item"):  # a numpy scalar
        return _plain(value.item())
    return value


def fingerprint(
    seeds: int, scenarios: list[str] | None = None, *, all_agents: bool = False
) -> dict[str, Any]:
    """Run the grid; its size, the rows' digest, the traces' digest, and one digest per scenario."""
    from harness.protocol.strategies import STRATEGIES
    from harness.scenarios.scenario import list_scenarios
    from harness.session.host import HOSTS
    from harness.session.registry import list_agents
    from harness.session.simulated import run_session

    rows, traces = hashlib.sha256(), hashlib.sha256()
    per_scenario: dict[str, str] = {}
    sessions = 0
    for scenario in scenarios or list_scenarios():
        mine = hashlib.sha256()
        left_out = _LLM if all_agents else _LLM | LATER_AGENTS
        for agent in (a for a in list_agents() if a not in left_out):
            for strategy in STRATEGIES:
                for host in HOSTS:
                    for era in ("handshake", "stateless"):
                        for seed in range(seeds):
                            result = run_session(scenario, agent, strategy, seed, host=host, era=era)
                            row = {
                                k: _plain(v)
                                for k, v in result.to_row().items()
                                if k != "wall_time_s"
                                and k not in SCENARIO_COLUMNS
                                and LATER_COLUMNS.get(k, _UNSET) != v
                            }
                            line = json.dumps(row, sort_keys=True, default=str).encode() + b"\n"
                            rows.update(line)
                            mine.update(line)
                            traces.update(str(row["trace_hash"]).encode() + b"\n")
                            sessions += 1
        per_scenario[scenario] = mine.hexdigest()[:16]
    return {
        "sessions": sessions,
        "rows_sha256": rows.hexdigest(),
        "traces_sha256": traces.hexdigest(),
        "per_scenario": per_scenario,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=3, help="seeds per cell (default 3)")
    parser.add_argument("--scenario", action="append", help="only these scenarios (repeatable)")
    parser.add_argument("--all-agents", action="store_true", help="hash the LATER_AGENTS' sessions too")
    args = parser.parse_args(argv)
    json.dump(fingerprint(args.seeds, args.scenario, all_agents=args.all_agents), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
