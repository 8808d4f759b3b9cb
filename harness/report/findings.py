"""What a run finds, in plain words: the block headed ``Findings`` that every view of a run shows.

A table of fifteen columns does not say what helps. The findings do, per agent: which strategies
change success against the baseline (``is_error``), by how much, with the interval and the
adjusted p; then what did not change; then what the run cannot tell. For example::

    reader: masked and collapse each lose 0.17 of success against is_error (95% CI -0.37 to
    +0.03, 15 scenarios, 3 of them by 0.1 or more; not significant after Holm, p = 1)

The numbers are the run's comparison, one estimand for every view (:func:`headline`): per agent
and strategy, Δ = success under the strategy − under the baseline, paired on (scenario, seed,
host, era, swept values), each scenario's Δ its mean over its seeds and the values it was run
at, and the mean over scenarios (each scenario weighs the same) with the t interval over
scenarios and its t test; a scenario counts as changed when its |Δ| reaches the minimum effect
(``MIN_EFFECT``, 0.1); p-values adjusted together over every agent and strategy against the
baseline (Holm). ``harness compare``'s rows grouped by agent, ``harness effects``' shares,
``harness view`` and ``harness run``'s summary give the same numbers
(``tests/report/test_one_comparison.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.protocol.strategies import STRATEGIES
from harness.report.display import p_value, plural, signed
from harness.report.inference import CONFIDENCE, MIN_EFFECT, split_harness_errors

if TYPE_CHECKING:
    from harness.batch.results import RunState

TITLE = "Findings"
SIGNIFICANT = 0.05
"""An adjusted p below this is a change the run shows; above it, one it cannot tell from none."""


def headline(
    df: pd.DataFrame, *, baseline: str = "is_error", min_effect: float = MIN_EFFECT, adjust: str = "holm"
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The run's comparison: (shares, per-scenario effects, unit effects) of every agent and every
    strategy against ``baseline`` (:func:`harness.report.effects.effect_shares`), its p-values
    adjusted as one family: the family ``harness compare --by agent`` adjusts, whichever rows a
    view shows."""
    from harness.report.effects import effect_shares, per_scenario_effects, scenario_effects

    everyone = sorted(set(df["strategy"].unique()) - {baseline})
    units = scenario_effects(df, baseline=baseline, against=everyone, min_effect=min_effect)
    per = per_scenario_effects(units, min_effect=min_effect)
    shares = effect_shares(per, adjust=adjust, min_effect=min_effect)
    return shares, per, units


@dataclass(frozen=True)
class Change:
    """One agent and strategy against the baseline, as the findings say it."""

    agent: str
    strategy: str
    scenarios: int
    effect: float
    lo: float
    hi: float
    p_adjusted: float
    helped: int
    hurt: int

    @property
    def significant(self) -> bool:
        return not math.isnan(self.p_adjusted) and self.p_adjusted < SIGNIFICANT

    tie: bool = True
    """Every scenario's Δ is 0 (not just its mean)."""

    def numbers(self) -> tuple[Any, ...]:
        """What makes two strategies say the same sentence."""
        return (self.scenarios, round(self.effect, 6), round(self.lo, 6), round(self.hi, 6),
                round(self.p_adjusted, 6), self.helped, self.hurt)  # fmt: skip


@dataclass(frozen=True)
class Findings:
    """The findings of one run, as lines of plain words (:meth:`lines`) and as json (:meth:`document`)."""

    baseline: str
    adjust: str
    min_effect: float
    changes: tuple[Change, ...] = ()
    scenarios: int = 0
    seeds: str = ""
    family: int = 0
    cannot: tuple[str, ...] = ()
    """What the run cannot tell, one sentence each."""
    agents: tuple[str, ...] = field(default=())

    def head(self) -> str:
        """The line under the title: what Δ is, how it is tested."""
        if not self.changes:
            return ""
        adjusted = {"holm": "after Holm", "bh": "after Benjamini-Hochberg", "none": "unadjusted"}[self.adjust]
        return (
            f"Δ = success under a strategy − under {self.baseline}, same seeds: the mean over "
            f"{plural(self.scenarios, 'scenario')} ({self.seeds} seeds each), {CONFIDENCE:.0%} intervals "
            f"over scenarios; significant: p below {SIGNIFICANT:g} {adjusted} over the run's "
            f"{self.family} comparisons; a scenario changed when |Δ| ≥ {self.min_effect:g}."
        )

    def agent_lines(self) -> list[str]:
        """One line per agent: its changes, largest first, then what did not change."""
        out: list[str] = []
        for agent in self.agents:
            mine = [c for c in self.changes if c.agent == agent]
            moved = [c for c in mine if not c.tie]
            if not moved:
                out.append(f"{agent}: no strategy changes its success in any scenario.")
                continue
            groups: dict[tuple[Any, ...], list[Change]] = {}
            for change in sorted(moved, key=lambda c: (not c.significant, -abs(c.effect))):
                groups.setdefault(change.numbers(), []).append(change)
            said = [self._sentence(same, first=i == 0) for i, same in enumerate(groups.values())]
            still = [c.strategy for c in mine if c.tie]
            if still:
                said.append(f"{_names(still)}: no change in any scenario.")
            out.append(f"{agent}: " + " ".join(said))
        return out

    def _sentence(self, same: Sequence[Change], *, first: bool) -> str:
        c = same[0]
        who = _names([s.strategy for s in same])
        each = " each" if len(same) > 1 else ""
        verb = ("lose" if c.effect < 0 else "gain" if c.effect > 0 else "change") + (
            "" if len(same) > 1 else "s"
        )
        amount = f" {abs(c.effect):.2f} of success" if c.effect else " nothing on average"
        against = f" against {self.baseline}" if first else ""
        moved = c.helped + c.hurt
        by = f", {moved} changed" if moved else ""
        verdict = ("significant" if c.significant else "not significant") + self._after()
        interval = f"{CONFIDENCE:.0%} CI {signed(c.lo)} to {signed(c.hi)}"
        over = plural(c.scenarios, "scenario")
        p = p_value(c.p_adjusted)
        return f"{who}{each} {verb}{amount}{against} ({interval}, {over}{by}; {verdict}, p = {p})."

    def _after(self) -> str:
        return {"holm": " after Holm", "bh": " after Benjamini-Hochberg", "none": ""}[self.adjust]

    def lines(self) -> list[str]:
        """The block under its title: the head, a line per agent, what the run cannot tell."""
        out = [line for line in (self.head(),) if line]
        out += self.agent_lines()
        if self.cannot:
            out.append("What this run cannot tell: " + " ".join(self.cannot))
        return out

    def text(self) -> str:
        """For a terminal: the title, then each line as a bullet."""
        return "\n".join([TITLE, *(f"- {line}" for line in self.lines())])

    def markdown(self) -> str:
        """For a page or a document: the title as a heading line, the lines as a list."""
        return "\n".join([f"**{TITLE}**", "", *(f"- {line}" for line in self.lines())])

    def document(self) -> dict[str, Any]:
        rows = [{"agent": c.agent, "strategy": c.strategy, "scenarios": c.scenarios,
                 "mean_effect": c.effect, "lo": c.lo, "hi": c.hi, "p_adj": c.p_adjusted, "help": c.helped,
                 "hurt": c.hurt, "significant": c.significant, "every_scenario_tied": c.tie}
                for c in self.changes]  # fmt: skip
        return {"title": TITLE, "baseline": self.baseline, "adjust": self.adjust,
                "min_effect": self.min_effect, "family": self.family, "scenarios": self.scenarios,
                "seeds": self.seeds, "head": self.head(), "agents": self.agent_lines(),
                "cannot": list(self.cannot), "lines": self.lines(), "changes": rows}  # fmt: skip


def _names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def findings(
    df: pd.DataFrame,
    *,
    baseline: str = "is_error",
    adjust: str = "holm",
    min_effect: float = MIN_EFFECT,
    state: RunState | None = None,
) -> Findings:
    """What the run ``df`` finds (``state`` says whether it finished)."""
    from harness.report.effects import factor_columns, seeds_label

    cannot: list[str] = []
    if state is not None and state.complete is False:
        of = f" of {state.sessions_in_grid}" if state.sessions_in_grid is not None else ""
        cannot.append(f"the run is not finished ({state.sessions}{of} sessions): these are partial rows.")
    judged, broke = split_harness_errors(df)
    if len(broke):
        cannot.append(f"{len(broke)} sessions broke inside the harness and are left out (errors.log).")
    if judged.empty or baseline not in set(judged["strategy"].unique()):
        cannot.insert(0, f"no {baseline} sessions to pair with: nothing to compare against "
                         f"(run {baseline} beside the others).")  # fmt: skip
        return Findings(baseline, adjust, min_effect, cannot=tuple(cannot))
    others = sorted(set(judged["strategy"].unique()) - {baseline})
    if not others:
        cannot.insert(0, f"only {baseline} ran: no strategy to compare with it.")
        return Findings(baseline, adjust, min_effect, cannot=tuple(cannot))
    shares, per, _ = headline(judged, baseline=baseline, min_effect=min_effect, adjust=adjust)
    ties = per.groupby(["agent", "against"])["effect"].apply(lambda e: bool((e == 0).all()))
    order = {name: i for i, name in enumerate(STRATEGIES)}
    rows = sorted(shares.to_dict(orient="records"), key=lambda r: (r["agent"], order.get(r["against"], 99)))
    changes = tuple(
        Change(str(r["agent"]), str(r["against"]), int(r["scenarios"]), float(r["mean_effect"]),
               float(r["lo"]), float(r["hi"]), float(r["p_adj"]), int(r["help"]), int(r["hurt"]),
               bool(ties.get((r["agent"], r["against"]), False)))
        for r in rows
    )  # fmt: skip
    agents = tuple(sorted(set(judged["agent"].unique())))
    unpaired = sorted(set(agents) - {c.agent for c in changes})
    for agent in unpaired:
        cannot.append(f"{agent} has no sessions under {baseline} to pair with.")
    scenarios = int(per["scenario"].nunique()) if len(per) else 0
    if scenarios == 1:
        cannot.append("with one scenario every interval is about its seeds, not about other scenarios "
                      "(run more scenarios, or harness run --study).")  # fmt: skip
    if any(not c.tie and not c.significant for c in changes):
        cannot.append(
            f"not significant is not no difference: with {scenarios} scenarios a change can be real and "
            "still not told from none; the intervals say how large it could be."
        )
    factors = factor_columns(judged)
    if factors:
        cannot.append(f"each scenario's Δ pools its values of {', '.join(factors)} (harness effects "
                      "shows them one by one).")  # fmt: skip
    seeds = seeds_label(int(per["seeds_min"].min()), int(per["seeds_max"].max())) if len(per) else ""
    return Findings(baseline, adjust, min_effect, changes, scenarios, seeds, len(shares), tuple(cannot),
                    tuple(a for a in agents if a not in unpaired))  # fmt: skip
