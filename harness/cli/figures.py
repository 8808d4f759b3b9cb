"""Every result figure the README and docs/ quote, made by one command from fresh runs.

``python -m harness.cli.figures`` runs the runs the documents cite (the study with real sources,
the same study with the template source, the default batch), asks ``harness effects`` and
``harness compare`` for their JSON, and rewrites each generated block of the documents::

    <!-- figures:NAME -->
    ...made here, never typed by hand...
    <!-- /figures -->

``--check`` rewrites nothing: it exits 1 naming each block whose text differs from a fresh run's
(``tests/test_figures.py`` runs it). ``--runs DIR`` keeps the runs there (re-used when present,
so a second call only re-renders). Runs are deterministic, so a fresh run gives the same figures
on any machine with the same harness; only times differ, and no block holds a time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.report.display import p_value, signed_interval

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS: tuple[str, ...] = ("README.md", "docs/study.md", "docs/results.md", "docs/worlds.md")
"""The documents with generated blocks (paths from the repository's root)."""

BLOCK_NAMES: tuple[str, ...] = (
    "study-shares", "study-sources", "study-families", "study-features", "study-harm",
    "template-shares", "template-features", "default-compare", "default-table", "default-findings",
    "compare-glossary",
    "worlds-curves", "worlds-curves-families", "worlds-blind-curves", "worlds-headline", "worlds-blind",
    "worlds-draws", "worlds-kinds", "worlds-blind-kinds", "worlds-security",
    "worlds-extraction", "worlds-events", "worlds-events-list", "worlds-events-success", "worlds-dead",
    "worlds-controls", "worlds-hosts", "study-kinds",
    "study-rewrites",
)  # fmt: skip
"""Every block :func:`render` writes."""

BLOCK = re.compile(r"(<!-- figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figures -->)", re.S)


@dataclass(frozen=True)
class Run:
    """A run the documents cite: its name (a folder under --runs) and its ``harness run`` flags."""

    name: str
    args: tuple[str, ...]


RUNS: tuple[Run, ...] = (
    Run("study", ("--study",)),
    Run("study-template", ("--study", "--set", "faults.source=template")),
    Run("default", ()),
    Run("worlds", ("--study", "--worlds")),
    Run("worlds-controls", ("--study", "--worlds", "--agents", "reader,blind", "--strategies",
                            "is_error,collapse", "--seeds", "1", "--set",
                            "agent.order=retry_first,rediscover_first", "--set", "agent.retry_budget=0,1,3",
                            "--set", "agent.backoff=none,exponential")),
    Run("worlds-hosts", ("--study", "--worlds", "--agents", "reader,blind,oracle", "--strategies",
                         "is_error,collapse", "--hosts", "typical,transparent", "--seeds", "1")),
    Run("study-rewrites-off", ("--study", "--agents", "reader", "--strategies", "is_error,collapse",
                               "--set", "agent.rewrites=off")),
)  # fmt: skip


def _harness(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli.main", *args], capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode not in (0, 3):
        raise SystemExit(f"harness {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


class Runs:
    """The runs of :data:`RUNS` in one folder, each run (or found finished) when first asked for."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self._json: dict[tuple[str, ...], Any] = {}

    def __getitem__(self, name: str) -> Path:
        run = next(r for r in RUNS if r.name == name)
        path = self.where / run.name
        if not (path / "sessions.parquet").exists():
            if path.exists():
                raise SystemExit(f"{path}: an unfinished run; remove it or finish it (harness run --resume)")
            start = time.perf_counter()
            _harness("run", *run.args, "--out", str(path), "--no-compare")
            print(f"figures: run {run.name} took {time.perf_counter() - start:.0f} s", file=sys.stderr)
        return path

    def json(self, command: str, name: str, *extra: str) -> Any:
        key = (command, name, *extra)
        if key not in self._json:
            self._json[key] = json.loads(_harness(command, str(self[name]), "--format", "json", *extra))
        return self._json[key]


# -- the numbers, as the documents show them ----------------------------------------------


def _json_lines(text: str) -> list[dict[str, Any]]:
    """A command's ``--json`` output: one object per line."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _share(count: int, total: int) -> str:
    pct = 100 * count / total if total else 0.0
    return f"{count} ({'<1' if 0 < pct < 1 else f'{pct:.0f}'}%)"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _shares(doc: Mapping[str, Any]) -> str:
    rows = []
    still: list[str] = []
    for r in doc["shares"]:
        n = r["scenarios"]
        cells = [_share(r["help"], n), _share(r["none"], n), _share(r["hurt"], n),
                 signed_interval(r["mean_effect"], r["lo"], r["hi"]), p_value(r["p_adj"])]  # fmt: skip
        if r["help"] == r["hurt"] == 0 and r["mean_effect"] == 0:
            still.append(r["agent"])
            continue
        rows.append([r["agent"], r["against"], *cells])
    if still:
        first = next(r for r in doc["shares"] if r["agent"] == still[0])
        rows.append([", ".join(still), first["against"], _share(0, first["scenarios"]),
                     _share(first["scenarios"], first["scenarios"]), _share(0, first["scenarios"]),
                     signed_interval(0.0, first["lo"], first["hi"]), p_value(first["p_adj"])])  # fmt: skip
    m = doc["min_effect"]
    head = ["agent", "strategy", f"help (Δ ≤ −{m:g})", "no difference", f"hurt (Δ ≥ +{m:g})",
            "mean Δ [95% CI]", "p adj"]  # fmt: skip
    return _table(head, rows)


def _groups(rows: Sequence[Mapping[str, Any]], agent: str, what: str) -> str:
    chosen = [r for r in rows if r["agent"] == agent]
    body = [[r["group"], str(r["scenarios"]), signed_interval(r["mean_effect"], r["lo"], r["hi"]),
             p_value(r["p_adj"])] for r in chosen]  # fmt: skip
    return _table([what, "scenarios", "mean Δ [95% CI]", "p adj"], body)


def _features(doc: Mapping[str, Any], agent: str, top: int) -> str:
    chosen = [r for r in doc["features"] if r["agent"] == agent][:top]
    body = [[r["feature"], f"{r['n_with']}/{r['n_without']}",
             signed_interval(r["difference"], r["lo"], r["hi"]) if r["lo"] is not None
             else f"{r['difference']:+.2f} (–)",
             p_value(r["p_adj"])] for r in chosen]  # fmt: skip
    return _table(["feature", "n with/without", "mean Δ with − without [95% CI]", "p adj"], body)


def _harm(rows: Any) -> str:
    body = []
    for (agent, strategy), g in rows.groupby(["agent", "strategy"], sort=True):
        if agent in ("reader", "refresher") and strategy in ("is_error", "collapse"):
            counts = [
                str(int(g[c].sum())) for c in ("harmful_calls", "misled", "misreported", "messages_read")
            ]
            body.append([agent, strategy, str(len(g)), f"{g['success'].mean():.3f}", *counts])
    return _table(["agent", "strategy", "sessions", "success", "harmful calls", "misled", "misreported",
                   "texts read"], body)  # fmt: skip


def _compare(doc: Mapping[str, Any], agents: Sequence[str]) -> str:
    body = []
    for r in doc["rows"]:
        if r["agent"] not in agents:
            continue
        diff = signed_interval(r.get("success_diff"), r.get("diff_lo"), r.get("diff_hi"))
        rate = f"{r['success_rate']:.2f} [{r['success_lo']:.2f}, {r['success_hi']:.2f}]"
        # the counts at the run's --min-effect, as harness compare prints them (not the sign counts)
        sides = f"{r['n_help']}/{r['n_none']}/{r['n_hurt']}" if r.get("n_pairs") else "–"
        body.append(
            [r["agent"], r["strategy"], rate, diff, sides, p_value(r.get("p")), p_value(r.get("p_adjusted"))]
        )
    return _table(["agent", "strategy", "success [95% CI]", "Δ vs is_error [95% CI]",
                   "scenarios -/0/+ (±0.1)", "p", "p holm"], body)  # fmt: skip


def _arrow(a: float | None, b: float | None, digits: int = 2) -> str:
    if a is None or b is None:
        return "–"
    return f"{a:.{digits}f} → {b:.{digits}f}"


def _calls(r: Mapping[str, Any]) -> str:
    if r["calls_diff"] is None:
        return "–"
    if r["calls_lo"] is None:
        return f"{r['calls_diff']:+.2f}" + (" (every task alike)" if r["calls_tasks"] > 1 else "")
    return signed_interval(r["calls_diff"], r["calls_lo"], r["calls_hi"])


def _steps(r: Mapping[str, Any]) -> str:
    """A row's Δ restricted steps (a failure at the budget) with its interval."""
    if r.get("steps_diff") is None:
        return "–"
    if r["steps_lo"] is None:
        return f"{r['steps_diff']:+.2f}" + (" (every task alike)" if r["tasks"] > 1 else "")
    return signed_interval(r["steps_diff"], r["steps_lo"], r["steps_hi"])


STEPS_HEAD: tuple[str, ...] = ("Δ steps, failure at budget [95% CI]", "p adj")


def _steps_cells(r: Mapping[str, Any]) -> list[str]:
    return [_steps(r), p_value(r.get("steps_p_adj"))]


def _contrast(rows: Sequence[Mapping[str, Any]], first: str, value: str, other: str, what: str,
              sides: tuple[str, str], unit: str = "tasks") -> str:  # fmt: skip
    """A world table's rows of one (agent, other strategy) or (strategy, other agent)."""
    chosen = [r for r in rows if r[first] == value and r["other"] == other]
    body = [[r["group"], str(r["tasks"]), _arrow(r["success_base"], r["success_other"]),
             signed_interval(r["success_diff"], r["success_lo"], r["success_hi"]),
             p_value(r["success_p_adj"]), *_steps_cells(r),
             _arrow(r["calls_base"], r["calls_other"], 1), _calls(r), p_value(r["calls_p_adj"]),
             str(r.get("dead", 0))]
            for r in chosen]  # fmt: skip
    a, b = sides
    head = [what, unit, f"success {a} → {b}", "Δ success [95% CI]", "p adj", *STEPS_HEAD,
            f"calls to success {a} → {b}", "Δ calls [95% CI]", "p adj",
            "no agent solves (apart)"]  # fmt: skip
    return _table(head, body)


FAMILY_ROWS: tuple[str, ...] = ("agentdojo", "bfcl", "bfcl/upstream", "bfcl/raised", "all worlds")
"""The rows of the README's headline: per world family, BFCL per condition, every world."""


def _curves(rows: Sequence[Mapping[str, Any]], first: str, value: str, other: str, what: str,
            sides: tuple[str, str], groups: Sequence[str] | None = None) -> str:  # fmt: skip
    """A budget-free table's rows of one comparison (:func:`harness.report.curves.curve_table`): the
    restricted means of calls and steps, and Δ S at each fixed budget with its adjusted p (only
    the rows of ``groups``, in that order, when given; their p-values adjusted over every row)."""
    chosen = [r for r in rows if r[first] == value and r["other"] == other]
    if groups is not None:
        chosen = sorted(
            (r for r in chosen if r["group"] in groups), key=lambda r: list(groups).index(r["group"])
        )
    by: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in chosen:
        by.setdefault(r["group"], {})[r["estimand"]] = r

    def delta(r: Mapping[str, Any]) -> str:
        return signed_interval(r["diff"], r["lo"], r["hi"])

    shares = ("S(planned)", "S(planned+2)", "S(planned+5)", "S(budget)")
    body = [[group, str(e["rmean_calls"]["tasks"]), _arrow(e["rmean_calls"]["value_base"],
             e["rmean_calls"]["value_other"], 1), delta(e["rmean_calls"]), p_value(e["rmean_calls"]["p_adj"]),
             delta(e["rmean_steps"]), p_value(e["rmean_steps"]["p_adj"]),
             *[f"{delta(e[k])} ({p_value(e[k]['p_adj'])})" for k in shares]]
            for group, e in by.items()]  # fmt: skip
    a, b = sides
    head = [what, "tasks", f"calls to success {a} → {b}", "Δ calls [95% CI]", "p adj", "Δ steps [95% CI]",
            "p adj", *[f"Δ {k} (p adj)" for k in shares]]  # fmt: skip
    return _table(head, body)


def _controls(rows: Sequence[Mapping[str, Any]]) -> str:
    """The reader against the blind control family (:func:`harness.report.worlds.control_table`)."""
    body = [[r["strategy"], r["group"], r["against"], f"`{r['member']}`", str(r["tasks"]),
             _arrow(r["success_base"], r["success_other"]),
             signed_interval(r["success_diff"], r["success_lo"], r["success_hi"]),
             p_value(r["success_p_adj"]), *_steps_cells(r), _arrow(r["calls_base"], r["calls_other"], 1),
             _calls(r), p_value(r["calls_p_adj"]), str(r.get("dead", 0))]
            for r in rows]  # fmt: skip
    head = ["strategy", "world", "control", "member (order/retries/wait)", "tasks",
            "success control → reader", "Δ success [95% CI]", "p adj", *STEPS_HEAD,
            "calls to success control → reader",
            "Δ calls [95% CI]", "p adj", "no agent solves (apart)"]  # fmt: skip
    return _table(head, body)


def _hosts(rows: Sequence[Mapping[str, Any]], other: str = "collapse") -> str:
    """The reader's headline per host (:func:`harness.report.worlds.world_tables`' ``hosts``)."""
    body = [[r["host"], r["group"], str(r["tasks"]), _arrow(r["success_base"], r["success_other"]),
             signed_interval(r["success_diff"], r["success_lo"], r["success_hi"]),
             p_value(r["success_p_adj"]), *_steps_cells(r), _arrow(r["calls_base"], r["calls_other"], 1),
             _calls(r), p_value(r["calls_p_adj"]), str(r.get("dead", 0))]
            for r in rows if r["agent"] == "reader" and r["other"] == other]  # fmt: skip
    head = ["host", "world", "tasks", f"success is_error → {other}", "Δ success [95% CI]", "p adj",
            *STEPS_HEAD,
            f"calls to success is_error → {other}", "Δ calls [95% CI]", "p adj",
            "no agent solves (apart)"]  # fmt: skip
    return _table(head, body)


def _dead(rows: Sequence[Mapping[str, Any]]) -> str:
    """The scenarios no agent can solve (:func:`harness.report.worlds.dead_table`), or a line saying none."""
    if not rows:
        return "The oracle solves every scenario of the run under is_error.\n"
    body = [[f"`{r['scenario']}`", r["condition"], str(r["sessions"]), f"{r['solved']:.2f}"] for r in rows]
    return _table(["scenario", "condition", "sessions", "share solved by any agent"], body)


def _security(rows: Sequence[Mapping[str, Any]]) -> str:
    body = []
    for condition in ("injection_error", "injection_result"):
        for strategy in ("is_error", "masked", "collapse"):
            mine = {r["agent"]: r for r in rows if r["condition"] == condition and r["strategy"] == strategy}
            if not mine:
                continue
            breached = ", ".join(f"{a} {mine[a]['breached']}" for a in sorted(mine))
            reader = mine.get("reader", {})
            harmful = sum(r["harmful_calls"] for r in mine.values())
            body.append([condition, strategy, str(reader.get("sessions", 0)), breached,
                         str(reader.get("misled", 0)), str(harmful)])  # fmt: skip
    return _table(["condition", "strategy", "sessions per agent", "security breached (AgentDojo's verdict)",
                   "reader: calls an injected text named", "harmful calls, all agents"], body)  # fmt: skip


def _extraction(lines: str) -> str:
    rows = _json_lines(lines)
    attacks = list(dict.fromkeys(r["attack"] for r in rows))
    body = [[a, str(sum(r["attack"] == a for r in rows)),
             str(sum(r["attack"] == a and r["found"] for r in rows)),
             str(sum(r["attack"] == a and r["right_tool"] for r in rows))] for a in attacks]  # fmt: skip
    body.append(
        ["all", str(len(rows)), str(sum(r["found"] for r in rows)), str(sum(r["right_tool"] for r in rows))]
    )
    return _table(["attack", "texts", "an instruction found", "to a tool the injection task calls"], body)


def _events(lines: str) -> str:
    rows = _json_lines(lines)
    conditions = list(dict.fromkeys((r["kind"], r["rename"]) for r in rows))
    body = []
    for kind, rename in conditions:
        mine = [r for r in rows if (r["kind"], r["rename"]) == (kind, rename)]
        counts = [
            str(sum(r["status"] == st for r in mine)) for st in ("admitted", "refused", "not_applicable")
        ]
        stale = sum(r["status"] == "admitted" and bool(r["stale_passes"]) for r in mine)
        body.append([kind, rename or "–", *counts, str(stale)])
    return _table(["event", "rename", "admitted", "refused", "not applicable",
                   "admitted, the stale plan passes too"], body)  # fmt: skip


_YES_NO = {True: "yes", False: "no", None: "–"}


def _events_list(lines: str) -> str:
    rows = _json_lines(lines)
    body = [[f"`{r['scenario']}`", r["rename"] or "–", r["status"], r["reason"], _YES_NO[r["stale_passes"]],
             "" if r["change"] is None else f"{r['change']['old']} → {r['change']['new']}"]
            for r in rows if r["status"] != "not_applicable"]  # fmt: skip
    return _table(["pair", "rename", "status", "why", "stale plan passes", "change"], body)


EVENT_AGENTS: tuple[str, ...] = ("oracle", "reader", "blind", "naive")
"""The agents whose success the world-events block shows, strongest first."""


def _events_success(
    rows: Sequence[Mapping[str, Any]], strategies: Sequence[str] = ("is_error", "collapse")
) -> str:
    """Success per world event condition, agent and strategy (:func:`harness.report.worlds.event_table`)."""
    by = {(r["condition"], r["agent"], r["strategy"]): r for r in rows}
    conditions = list(dict.fromkeys(r["condition"] for r in rows))
    body = []
    for c in conditions:
        tasks = max((r["tasks"] for r in rows if r["condition"] == c), default=0)
        cells = [_success_steps(by[(c, a, st)]) if (c, a, st) in by else "–"
                 for st in strategies for a in EVENT_AGENTS]  # fmt: skip
        body.append([c, str(tasks), *cells])
    head = ["condition", "tasks", *[f"{a} ({st})" for st in strategies for a in EVENT_AGENTS]]
    return _table(head, body)


def _success_steps(r: Mapping[str, Any]) -> str:
    """An event cell: its success, and its restricted mean steps (a failure at the budget)."""
    steps = r.get("steps")
    return f"{r['success']:.2f}" + ("" if steps is None else f" ({steps:.1f})")


def _rewrites(full: Mapping[str, Any], off: Mapping[str, Any]) -> str:
    def reader(doc: Mapping[str, Any]) -> Mapping[str, Any]:
        return next(r for r in doc["shares"] if r["agent"] == "reader" and r["against"] == "collapse")

    a, b = reader(full), reader(off)
    share = (a["mean_effect"] - b["mean_effect"]) / a["mean_effect"] if a["mean_effect"] else float("nan")
    body = [
        [label, str(r["scenarios"]), signed_interval(r["mean_effect"], r["lo"], r["hi"]), p_value(r["p_adj"])]
        for label, r in (("on (as shipped)", a), ("off", b))
    ]
    return _table(
        ["reader's rewrites", "scenarios", "mean Δ (collapse − is_error) [95% CI]", "p adj"], body
    ) + (f"\nShare of the reader's effect the rewrites carry: {100 * share:.0f} %.\n")


def _compare_table(markdown: str) -> str:
    """``harness compare --format markdown`` up to its legend (docs/results.md has the glossary)."""
    return markdown.split("\n\nColumns:\n")[0].rstrip("\n") + "\n"


def _findings(doc: Mapping[str, Any]) -> str:
    """The findings block of ``harness compare``'s json, as a markdown list (what the run ends with)."""
    return "\n".join(f"- {line}" for line in doc["findings"]["lines"]) + "\n"


def _glossary() -> str:
    """What each column of the comparison means: the words of the legend and the page's tooltips."""
    from harness.report.display import COLUMN_MEANINGS

    return _table(["column", "what it means"], [[c, m] for c, m in COLUMN_MEANINGS.items()])


def render(runs: Runs, names: Sequence[str] = BLOCK_NAMES) -> dict[str, str]:
    """The text of each block in ``names``, from the runs (only the runs those blocks need)."""
    import pandas as pd

    def study() -> Any:
        return runs.json("effects", "study", "--against", "collapse")

    def template() -> Any:
        return runs.json("effects", "study-template", "--against", "collapse")

    def worlds() -> Any:
        return runs.json("effects", "worlds", "--against", "collapse")

    blocks: dict[str, Callable[[], str]] = {
        "study-shares": lambda: _shares(study()),
        "study-sources": lambda: _groups(study()["sources"], "reader", "source of the texts"),
        "study-families": lambda: _groups(study()["families"], "reader", "family"),
        "study-features": lambda: _features(study(), "reader", 6),
        "study-harm": lambda: _harm(pd.read_parquet(runs["study"] / "sessions.parquet")),
        "template-shares": lambda: _shares(template()),
        "template-features": lambda: _features(template(), "reader", 6),
        "default-compare": lambda: _compare(runs.json("compare", "default"), ("reader", "refresher")),
        "default-table": lambda: _compare_table(
            _harness("compare", str(runs["default"]), "--format", "markdown")
        ),
        "default-findings": lambda: _findings(runs.json("compare", "default")),
        "compare-glossary": _glossary,
        "worlds-curves": lambda: _curves(
            worlds()["curves"], "agent", "reader", "collapse", "world", ("is_error", "collapse")
        ),
        "worlds-curves-families": lambda: _curves(
            worlds()["curves"], "agent", "reader", "collapse", "world", ("is_error", "collapse"), FAMILY_ROWS
        ),
        "worlds-blind-curves": lambda: _curves(
            worlds()["blind_curves"], "strategy", "is_error", "reader", "world", ("blind", "reader")
        ),
        "worlds-headline": lambda: _contrast(
            worlds()["worlds"], "agent", "reader", "collapse", "world", ("is_error", "collapse")
        ),
        "worlds-blind": lambda: _contrast(
            worlds()["blind"], "strategy", "is_error", "reader", "world", ("blind", "reader")
        ),
        "worlds-draws": lambda: _contrast(
            worlds()["draws"], "agent", "reader", "collapse", "fault draw", ("is_error", "collapse")
        ),
        "worlds-kinds": lambda: _contrast(
            worlds()["kinds"], "agent", "reader", "collapse", "failure kind", ("is_error", "collapse")
        ),
        "worlds-blind-kinds": lambda: _contrast(
            worlds()["blind_kinds"], "strategy", "is_error", "reader", "failure kind", ("blind", "reader")
        ),
        "worlds-security": lambda: _security(worlds()["security"]),
        "worlds-extraction": lambda: _extraction(_harness("worlds", "injections", "--json")),
        "worlds-events": lambda: _events(_harness("worlds", "events", "--json", "--all")),
        "worlds-events-list": lambda: _events_list(_harness("worlds", "events", "--json")),
        "worlds-events-success": lambda: _events_success(worlds()["events"]),
        "worlds-dead": lambda: _dead(worlds()["dead"]),
        "worlds-controls": lambda: _controls(
            runs.json("effects", "worlds-controls", "--against", "collapse")["controls"]
        ),
        "worlds-hosts": lambda: _hosts(
            runs.json("effects", "worlds-hosts", "--against", "collapse")["hosts"]
        ),
        "study-kinds": lambda: _contrast(
            study()["fault_kinds"],
            "agent",
            "reader",
            "collapse",
            "fault kind",
            ("is_error", "collapse"),
            "scenarios",
        ),
        "study-rewrites": lambda: _rewrites(
            study(), runs.json("effects", "study-rewrites-off", "--against", "collapse")
        ),
    }
    assert tuple(blocks) == BLOCK_NAMES
    return {name: blocks[name]() for name in names}


def rewrite(blocks: Mapping[str, str], documents: Sequence[str], *, check: bool) -> list[str]:
    """Put each block's text into ``documents``; the names of blocks that differed."""
    differ: list[str] = []
    for doc in documents:
        path = ROOT / doc
        text = path.read_text(encoding="utf-8")

        def fill(m: re.Match[str], doc: str = doc) -> str:
            name = m.group("name")
            if name not in blocks:
                raise SystemExit(f"{doc}: no figures named {name!r} (known: {', '.join(BLOCK_NAMES)})")
            if m.group("body") != blocks[name]:
                differ.append(f"{doc}:{name}")
            return m.group(1) + blocks[name] + m.group(4)

        new = BLOCK.sub(fill, text)
        if not check and new != text:
            path.write_text(new, encoding="utf-8")
    return differ


def blocks_in(documents: Sequence[str]) -> list[str]:
    """The block names ``documents`` quote, each once."""
    found = [m.group("name") for doc in documents for m in BLOCK.finditer((ROOT / doc).read_text())]
    return list(dict.fromkeys(found))


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m harness.cli.figures", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 if a block differs")
    parser.add_argument("--runs", type=Path, default=None, help="where the runs are kept (default: temp)")
    parser.add_argument(
        "documents", nargs="*", default=list(DOCUMENTS), help="the documents (default: all with blocks)"
    )
    args = parser.parse_args(argv)
    unknown = [d for d in args.documents if d not in DOCUMENTS]
    if unknown:
        parser.error(f"no generated blocks in {', '.join(unknown)} (documents: {', '.join(DOCUMENTS)})")
    with tempfile.TemporaryDirectory() as tmp:
        runs = Runs(args.runs or Path(tmp))
        differ = rewrite(render(runs, blocks_in(args.documents)), args.documents, check=args.check)
        if not args.check and args.documents == list(DOCUMENTS):  # the figures (PNG: drawn, not compared)
            _harness("plot", str(runs["default"]), "--out", str(ROOT / "docs" / "figures"))
            _harness("plot", str(runs["worlds"]), "--out", str(Path(tmp) / "worlds-plots"))
            shutil.copyfile(Path(tmp) / "worlds-plots" / "success_within_calls.png",
                            ROOT / "docs" / "figures" / "worlds_success_within_calls.png")  # fmt: skip
            _harness("effects", str(runs["study"]), "--against", "collapse", "--plot",
                     str(ROOT / "docs" / "figures" / "effects.png"))  # fmt: skip
    if differ:
        print(("differs from a fresh run: " if args.check else "rewrote: ") + ", ".join(differ))
    return 1 if differ and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
