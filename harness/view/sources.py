"""What ``harness view`` can open, besides a run: a ``harness bench`` output and a probe report.

:func:`open_source` tells them apart by what is on disk: a directory with ``manifest.json``
(or a ``sessions.parquet``) is a run (:class:`harness.view.run.RunView`); a directory with
``bench.parquet``/``bench.csv``, or a pytest-benchmark ``benchmark.json``, is a bench output
(:class:`BenchView`); a JSON file whose ``format`` is ``harness-probe/...`` is a probe report
(``harness probe --json``; :class:`ProbeView`).

The bench table is the one ``harness bench --format markdown`` prints and the targets table
the one its summary prints (:func:`harness.bench.table.markdown` and ``targets_markdown``,
read back into rows), so the page shows the figures the command shows.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from harness.batch.results import MANIFEST, SESSIONS
from harness.errors import UserError
from harness.view.markdown import first_table
from harness.view.run import RunView, jsonable, records

PROBE_FORMAT = "harness-probe/"
BENCH_FILES = ("bench.parquet", "bench.csv")


class BenchView:
    """A ``harness bench`` output directory, or a pytest-benchmark JSON it was built from."""

    kind = "bench"

    def __init__(self, path: Path) -> None:
        from harness.bench.table import summary, tidy

        self.path = path
        self.figures: dict[str, bytes] = {}
        info: dict[str, Any] | None = None
        if path.is_file():
            try:
                report = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise UserError(f"{path}: cannot read benchmark JSON ({exc})") from None
            if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
                raise UserError(f"{path}: not a pytest-benchmark JSON file (no 'benchmarks' list)")
            self.df = tidy(report)
            self._draw()
        else:
            found = [path / name for name in BENCH_FILES if (path / name).is_file()]
            if not found:
                raise UserError(f"{path}: no bench.parquet or bench.csv (not a harness bench output)")
            try:
                self.df = (
                    pd.read_parquet(found[0]) if found[0].suffix == ".parquet" else pd.read_csv(found[0])
                )
            except (OSError, ValueError) as exc:
                raise UserError(f"{found[0]}: unreadable ({exc})") from None
            summary_path = path / "summary.json"
            if summary_path.is_file():
                try:
                    info = json.loads(summary_path.read_text())
                except (OSError, ValueError):
                    info = None
            for png in sorted(path.glob("*.png")):
                self.figures[png.name] = png.read_bytes()
            if not self.figures:
                self._draw()
        self.info = info if isinstance(info, dict) and "targets" in info else summary(self.df)

    def _draw(self) -> None:
        from harness.bench.plots import draw_all

        with tempfile.TemporaryDirectory(prefix="harness-view-") as tmp:
            for p in draw_all(self.df, Path(tmp)):
                self.figures[p.name] = p.read_bytes()

    def summary(self) -> dict[str, Any]:
        from harness.bench.table import markdown, targets_markdown

        return {
            "kind": "bench",
            "path": str(self.path),
            "title": self.path.name or str(self.path),
            "table": first_table(markdown(self.df, keys=None)),
            "targets": first_table(targets_markdown(self.info)),
            "machine": jsonable(self.info.get("machine")),
            "quick": self.info.get("quick"),
            "failed": jsonable(self.info.get("failed") or []),
            "rows": records(self.df),
            "figures": list(self.figures),
        }

    def figure(self, name: str) -> bytes | None:
        return self.figures.get(name)


class ProbeView:
    """A ``harness probe --json`` report."""

    kind = "probe"

    def __init__(self, path: Path, report: dict[str, Any]) -> None:
        self.path = path
        self.report = report

    def summary(self) -> dict[str, Any]:
        given = self.report.get("eras")
        eras: dict[str, Any] = given if isinstance(given, dict) else {}
        try:  # the report module's names for the eras, where it loads
            from harness.probe.report import ERA_TITLES

            titles = dict(ERA_TITLES)
        except ImportError:
            titles = {}
        rules = [r for r in self.report.get("rules") or [] if isinstance(r, dict)]
        order = list(eras) or sorted({str(r.get("era", "handshake")) for r in rules})
        sections = []
        for era in order:
            rows = [r for r in rules if str(r.get("era", "handshake")) == era]
            found = eras.get(era)
            info: dict[str, Any] = found if isinstance(found, dict) else {}
            sections.append(
                {
                    "era": era,
                    "title": titles.get(era, era),
                    "spoken": info.get("spoken"),
                    "evidence": info.get("evidence"),
                    "rules": rows,
                    "summary": (self.report.get("summary_by_era") or {}).get(era),
                }
            )
        return {
            "kind": "probe",
            "path": str(self.path),
            "title": self.path.name,
            "format": self.report.get("format"),
            "server": self.report.get("server"),
            "command": self.report.get("command"),
            "not_mcp": self.report.get("not_mcp"),
            "summary": self.report.get("summary"),
            "eras": sections,
            "report": self.report,
        }

    def figure(self, name: str) -> bytes | None:
        return None


Source = RunView | BenchView | ProbeView


def open_source(path: Path) -> Source:
    """The run, bench output or probe report at ``path``; one-line UserError for anything else."""
    if not path.exists():
        raise UserError(f"{path}: no such results directory or file")
    if path.is_dir():
        if (path / MANIFEST).exists() or (path / SESSIONS).exists():
            return RunView(path / SESSIONS if not (path / MANIFEST).exists() else path)
        if any((path / name).is_file() for name in BENCH_FILES):
            return BenchView(path)
        raise UserError(
            f"{path}: not a harness results directory (no {MANIFEST}), nor a bench output (no bench.csv)"
        )
    if path.suffix == ".parquet":
        return RunView(path)
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"{path}: not JSON ({exc})") from None
        if isinstance(doc, dict) and str(doc.get("format", "")).startswith(PROBE_FORMAT):
            return ProbeView(path, doc)
        if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list):
            return BenchView(path)
        raise UserError(f"{path}: neither a probe report (harness probe --json) nor a pytest-benchmark JSON")
    raise UserError(f"{path}: give a results directory, a bench output directory, or a probe report (.json)")
