"""Figures are drawn from a table: every applicable PNG is written and is a real image."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd

from harness.report.plots import draw_all


def frame(sweep: bool) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for scenario in ("a", "b"):
        for agent in ("naive", "reader"):
            for strategy in ("is_error", "masked", "collapse", "escape"):
                for seed in range(8):
                    ok = bool(rng.random() < (0.8 if strategy == "is_error" else 0.4))
                    row = {
                        "scenario": scenario, "agent": agent, "strategy": strategy, "host": "typical",
                        "seed": seed, "status": "ok", "success": ok, "recoveries": int(ok),
                        "recovery_opportunities": 1, "recover_steps": [int(rng.integers(1, 6))] if ok else [],
                        "repeated_failing_calls": 0,
                    }  # fmt: skip
                    if sweep:
                        row["faults.rate"] = [0.0, 0.2][seed % 2]
                    rows.append(row)
    return pd.DataFrame(rows)


def test_all_four_figures_for_a_swept_run(tmp_path: Path) -> None:
    written = draw_all(frame(sweep=True), tmp_path, run="test-run")
    assert sorted(p.name for p in written) == [
        "agent_strategy_heatmap.png",
        "steps_to_recover.png",
        "success_recovery_by_strategy.png",
        "success_vs_sweep.png",
    ]
    for p in written:
        img = mpimg.imread(p)
        assert img.shape[0] > 200 and img.shape[1] > 200
        assert img.std() > 0.01  # not a blank canvas


def test_no_sweep_figure_without_a_sweep(tmp_path: Path) -> None:
    names = {p.name for p in draw_all(frame(sweep=False), tmp_path, run="r")}
    assert "success_vs_sweep.png" not in names and len(names) == 3
