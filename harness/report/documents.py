"""A run's comparison and per-scenario effects as every view of it shows them.

``harness compare``, ``harness effects``, ``harness view`` and ``harness run``'s summary each
show a run; they build what they show here, so that the numbers cannot drift apart between
them: :func:`comparison` is the comparison table (its json document, the table as people read
it, its title), :func:`effects` every table of ``harness effects`` (its json document, its
markdown, the parts a terminal prints). The command line prints them; the viewer serves them.
Neither calls the other.

A user's mistake (an unknown baseline, a grouping column the run lacks, a strategy it never
ran) is a :class:`~harness.errors.UserError` naming it, whoever asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from harness.errors import UserError, unknown_name
from harness.protocol.strategies import STRATEGIES
from harness.report.display import (
    legend,
    meanings,
    plural,
    records,
    shown_features,
    shown_groups,
    shown_shares,
    shown_world,
    to_markdown,
)

if TYPE_CHECKING:
    from harness.batch.results import RunState
    from harness.report.findings import Findings
    from harness.report.inference import Adjust, Unit

BASELINE = "is_error"
"""The strategy every other is paired against, unless a command is told otherwise."""
K = 3
"""k of pass^k."""
UNIT = "scenario"
ADJUST = "holm"
"""The unit of inference and the p-value adjustment of a run's comparison."""


def check_baseline(df: pd.DataFrame, baseline: str) -> None:
    """``baseline`` is a strategy the run has sessions of; else a UserError that says which it has."""
    if baseline not in set(df["strategy"].unique()):
        if baseline not in STRATEGIES:
            raise unknown_name("--baseline strategy", baseline, STRATEGIES)
        raise UserError(
            f"--baseline {baseline}: no sessions with that strategy (have: {sorted(set(df.strategy))})"
        )


# -- the comparison ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """One comparison of a run: the table, as people read it, and as json."""

    table: pd.DataFrame
    """:func:`harness.report.stats.compare`'s rows."""
    shown: pd.DataFrame
    """The table as printed (:func:`harness.report.stats.display_frame`)."""
    source: str
    baseline: str
    k: int
    unit: str
    adjust: str
    inference: str
    """The line naming the unit of inference, the intervals and the adjustment."""
    state: RunState | None = None
    findings: Findings | None = None
    """What the run finds, in words (:mod:`harness.report.findings`), from the same numbers."""

    @property
    def warning(self) -> str:
        """The incomplete run's warning line; empty for a finished run."""
        return self.state.warning(self.source) if self.state is not None else ""

    def title(self) -> str:
        """The terminal table's title, in words: the run, what Δ is, what the intervals and p rest
        on (the statistics' names are in the legend, ``--explain``)."""
        table = self.table
        scenarios = int(table["n_clusters"].max()) if self.unit == "scenario" and len(table) else None
        over = "scenarios" if self.unit == "scenario" else "sessions"
        family = int(table["p"].notna().sum()) if "p" in table.columns else 0
        adjusted = {"holm": "Holm", "bh": "Benjamini-Hochberg"}.get(self.adjust)
        how = f"p adjusted: {adjusted} over the table's {family} p-values" if adjusted else "p not adjusted"
        title = (f"strategy comparison by {', '.join(self._groups()) or 'strategy'} ({self.source})"
                 + (f": {plural(scenarios, 'scenario')}" if scenarios else "")
                 + f"; 95% intervals over {over} (unit of inference: {self.unit}); Δ = success under "
                 f"the strategy − under {self.baseline} on the same seeds; {how}; what each column "
                 "means: --explain")  # fmt: skip
        state = self.state
        if state is not None and state.complete is False:
            of = f" of {state.sessions_in_grid}" if state.sessions_in_grid is not None else ""
            status = state.status or "unknown"
            title = f"INCOMPLETE RUN ({state.sessions}{of} sessions, status {status}): {title}"
        return title

    def _groups(self) -> list[str]:
        columns = [str(c) for c in self.shown.columns]
        return columns[: columns.index("strategy")] if "strategy" in columns else []

    def legend(self) -> list[str]:
        """What each column means (:func:`harness.report.display.legend`), then the inference."""
        return [*legend([str(c) for c in self.shown.columns]), f"Intervals and tests: {self.inference}."]

    def document(self) -> dict[str, Any]:
        """``harness compare --format json``'s document."""
        run: dict[str, Any] = (
            self.state.to_json() if self.state is not None else {"complete": None, "status": None}
        )
        if self.warning:
            run["warning"] = self.warning
        doc = {"source": self.source, **run, "baseline": self.baseline, "k": self.k, "unit": self.unit,
               "adjust": self.adjust, "inference": self.inference, "title": self.title(),
               "rows": records(self.table),
               "meanings": meanings([str(c) for c in self.shown.columns])}  # fmt: skip
        if self.findings is not None:
            doc["findings"] = self.findings.document()
        return doc

    def markdown(self) -> str:
        """``harness compare --format markdown``: the inference line, then the table."""
        head = f"> **Warning:** {self.warning}\n\n" if self.warning else ""
        out = f"{head}Baseline {self.baseline}; {self.inference}.\n\n{to_markdown(self.shown)}"
        out += "\n\nColumns:\n\n" + "\n".join(
            f"- {line}" for line in legend([str(c) for c in self.shown.columns])
        )
        if self.findings is not None:
            out += "\n\n" + self.findings.markdown()
        return out


def comparison(
    df: pd.DataFrame,
    *,
    by: Sequence[str] = ("agent",),
    baseline: str = BASELINE,
    k: int = K,
    unit: str = UNIT,
    adjust: str = ADJUST,
    source: str = "",
    state: RunState | None = None,
    min_effect: float | None = None,
    with_findings: bool = True,
) -> Comparison:
    """The comparison of ``df`` grouped by ``by`` (:func:`harness.report.stats.compare`), with the
    arguments checked as the commands check them, and the run's findings in words (from the run's
    comparison, per agent, whatever ``by`` and ``unit`` the table has; ``adjust`` and
    ``min_effect`` are the table's)."""
    from harness.report.findings import findings
    from harness.report.inference import ADJUSTMENTS, MIN_EFFECT, UNITS, describe_inference
    from harness.report.stats import compare, display_frame

    check_baseline(df, baseline)
    for col in by:
        if col not in df.columns:
            raise unknown_name("--by column", col, map(str, df.columns))
    if unit not in UNITS:
        raise unknown_name("--unit", unit, UNITS)
    if adjust not in ADJUSTMENTS:
        raise unknown_name("--adjust", adjust, ADJUSTMENTS)
    minimum = MIN_EFFECT if min_effect is None else min_effect
    table = compare(df, by=list(by), baseline=baseline, k=k, unit=cast("Unit", unit),
                    adjust=cast("Adjust", adjust), min_effect=minimum)  # fmt: skip
    found = (
        findings(df, baseline=baseline, adjust=adjust, min_effect=minimum, state=state)
        if with_findings
        else None
    )
    return Comparison(table, display_frame(table, k), source, baseline, k, unit, adjust,
                      describe_inference(unit, adjust), state, found)  # fmt: skip


# -- the per-scenario effects --------------------------------------------------------------------


@dataclass(frozen=True)
class Effects:
    """Every table of ``harness effects`` for one run."""

    document: dict[str, Any]
    """``harness effects --format json``'s document."""
    parts: list[tuple[str, pd.DataFrame]]
    """The printed tables before the features, each under its title (the shares first)."""
    warnings: list[str]
    """One line per grouping whose groups disagree on the sign of the effect."""
    features: pd.DataFrame
    """The feature table (all rows; :attr:`shown_features` the printed ones)."""
    shown_features: pd.DataFrame
    features_title: str
    per: pd.DataFrame = field(repr=False)
    """Each (agent, strategy, scenario)'s effect: the figure's dots."""

    def markdown(self) -> str:
        """``harness effects --format markdown``, as it prints."""
        out = [f"{head}\n\n{to_markdown(frame)}\n\n" for head, frame in self.parts]
        out += [f"> **Warning:** {line}\n\n" for line in self.warnings]
        out += [f"{self.features_title}\n\n\n", to_markdown(self.shown_features) + "\n"]
        return "".join(out)


def check_against(
    df: pd.DataFrame, against: str | Sequence[str] | None, baseline: str, source: str
) -> list[str]:
    """The strategies to pair with ``baseline``: those named (each a strategy of the run, not the
    baseline), or by default those of :data:`harness.report.effects.AGAINST` the run has."""
    from harness.batch.grid import split_names
    from harness.report.effects import AGAINST

    have = sorted(set(df["strategy"]))
    if against is None:
        others = [s for s in AGAINST if s in have and s != baseline]
        if not others:
            raise UserError(
                f"{source}: no sessions under {' or '.join(AGAINST)} to pair with (have: {have}); "
                "name the strategies with --against"
            )
        return others
    others = list(split_names([against] if isinstance(against, str) else list(against)))
    if not others:
        raise UserError("--against: give at least one strategy (e.g. --against collapse)")
    for name in others:
        if name not in STRATEGIES:
            raise unknown_name("strategy", name, STRATEGIES)
        if name == baseline:
            raise UserError(f"--against {name}: that is the --baseline; pair it with another strategy")
        if name not in have:
            raise UserError(f"--against {name}: no sessions with that strategy in {source} (have: {have})")
    return others


def effects(
    df: pd.DataFrame,
    state: RunState,
    *,
    source: str,
    sources: Mapping[str, str] | None = None,
    against: str | Sequence[str] | None = None,
    baseline: str = BASELINE,
    adjust: str = ADJUST,
    min_effect: float | None = None,
    top: int = 8,
    min_group: int | None = None,
) -> Effects:
    """Every table ``harness effects`` shows for the run ``df`` (``source`` names it, ``sources``
    is its manifest's ``scenario_sources``)."""
    from harness.report.effects import (
        MIN_GROUP,
        UNIT_COLUMNS,
        feature_table,
        group_table,
        run_features,
        scenario_families,
        scenario_reading,
        scenario_text_sources,
        seeds_label,
        sign_warnings,
        value_table,
    )
    from harness.report.findings import headline
    from harness.report.inference import MIN_EFFECT
    from harness.report.worlds import WORLD_TITLES, world_tables

    min_effect = MIN_EFFECT if min_effect is None else min_effect
    min_group = MIN_GROUP if min_group is None else min_group
    if df.empty:
        raise UserError(f"{source}: no finished sessions yet ({state.status or 'no status'})")
    if baseline not in set(df["strategy"].unique()):
        raise UserError(
            f"--baseline {baseline}: no sessions with that strategy (have: {sorted(set(df.strategy))})"
        )
    others = check_against(df, against, baseline, source)
    sources = dict(sources or {})
    # One Holm family for the run: every agent and every strategy against the baseline, as
    # harness compare adjusts them, whichever of them --against shows.
    family, all_per, all_units = headline(df, baseline=baseline, min_effect=min_effect, adjust=adjust)
    shares = family[family["against"].isin(others)].reset_index(drop=True)
    unit_effects = all_units[all_units["against"].isin(others)].reset_index(drop=True)
    per = all_per[all_per["against"].isin(others)].reset_index(drop=True)
    names = sorted(set(per["scenario"]))
    features = run_features(names, sources)
    table = feature_table(per, features, adjust=adjust, min_group=min_group, min_effect=min_effect)
    families = scenario_families(names, sources)
    by_family = group_table(per, families, by="family", adjust=adjust, min_effect=min_effect)
    by_source = group_table(per, scenario_text_sources(names, sources), by="source", adjust=adjust,
                            min_effect=min_effect)  # fmt: skip
    by_read = group_table(
        per, scenario_reading(df, baseline), by="read", adjust=adjust, min_effect=min_effect
    )
    by_value = value_table(unit_effects, adjust=adjust, min_effect=min_effect)
    warnings = [*sign_warnings(by_family), *sign_warnings(by_source), *sign_warnings(by_value)]
    seeds_min = int(per["seeds_min"].min()) if len(per) else 0
    seeds_max = int(per["seeds_max"].max()) if len(per) else 0
    seeds = seeds_label(seeds_min, seeds_max)
    factors = [c for c in unit_effects.columns if c not in {"agent", *UNIT_COLUMNS}]
    world = world_tables(df, names, sources, baseline, others, adjust)
    document = {"source": source, **state.to_json(), "baseline": baseline, "against": others,
                "adjust": adjust, "family": len(family), "unit": "scenario", "n_clusters": len(names),
                "seeds": seeds_min if seeds_min == seeds_max else seeds, "seeds_min": seeds_min,
                "seeds_max": seeds_max, "min_effect": min_effect, "factors": factors,
                "shares": records(shares), "families": records(by_family), "sources": records(by_source),
                "read": records(by_read), "values": records(by_value),
                "warnings": warnings, "features": records(table), "scenarios": records(per),
                "effects": records(unit_effects), **{k: records(v) for k, v in world.items()}}  # fmt: skip
    over = f"its {seeds} seeds" + (f" and its values of {', '.join(factors)}" if factors else "")
    title = (f"effect of readable errors per scenario ({source}): {plural(len(names), 'scenario')}, "
             f"{seeds} seeds per scenario{' and value' if factors else ''}; Δ = success under the "
             f"strategy − under "
             f"{baseline}, paired on seeds, a scenario's Δ the mean over {over}; mean Δ over scenarios "
             f"with a t interval and t test; help: Δ ≤ −{min_effect:g}, hurt: Δ ≥ +{min_effect:g} "
             f"(--min-effect); unit: scenario; p adjusted: {adjust} over the run's {len(family)} "
             f"comparisons (every agent and strategy against {baseline}, as harness compare)")  # fmt: skip
    ftitle = (f"scenario features and the effect (top {top} by p per row group; tested when >= "
              f"{min_group} scenarios with and without; permutation test and its interval)")  # fmt: skip
    parts: list[tuple[str, pd.DataFrame]] = [(title, shown_shares(shares, baseline, min_effect))]
    if by_family["group"].nunique() > 1:
        parts.append(("per family (scenarios sampled from each; t interval over them)",
                      shown_groups(by_family, baseline, min_effect)))  # fmt: skip
    if by_source["group"].nunique() > 1:
        parts.append(("per source of the error texts (template, or the real stack whose library "
                      "wrote them; mixed: a scenario with several)",
                      shown_groups(by_source, baseline, min_effect)))  # fmt: skip
    if by_read["group"].nunique() > 1:
        parts.append((f"by whether the agent read anything in the texts under {baseline} "
                      "(decided after the strategy: a description, not a comparison)",
                      shown_groups(by_read, baseline, min_effect)))  # fmt: skip
    for factor in dict.fromkeys(by_value["by"]):
        sub = by_value[by_value["by"] == factor].reset_index(drop=True)
        parts.append((f"per value of {factor} (a factor within each scenario: every row over the same "
                      f"scenarios, compared paired with the first value)",
                      shown_groups(sub, baseline, min_effect)))  # fmt: skip
    parts += [(WORLD_TITLES[k], shown_world(v, k)) for k, v in world.items() if not v.empty]
    return Effects(document, parts, warnings, table, shown_features(table, top), ftitle, per)


def dumps(document: Mapping[str, Any]) -> str:
    """A document as the commands print it: one line of json (NaN never appears: it is null)."""
    return json.dumps(document, default=str)
