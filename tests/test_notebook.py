"""The analysis notebook runs headless, top to bottom, on a small real run."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from harness.batch.grid import Grid
from harness.batch.runner import SessionOptions, run_batch

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "analysis.ipynb"


@pytest.mark.slow
def test_analysis_notebook_executes_on_a_small_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.scenarios.scenario import list_scenarios

    run = tmp_path / "run"
    grid = Grid(
        tuple(list_scenarios()[:2]), ("naive", "reader"), ("is_error", "collapse"), ("typical",), (0, 1, 2)
    )
    run_batch(grid, run, executor="serial", options=SessionOptions())
    monkeypatch.setenv("HARNESS_RESULTS", str(run))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3
    text = "".join(str(o.get("data", {}).get("text/markdown", "")) for o in outputs)
    assert "is_error" in text and "collapse" in text
    assert (run / "plots" / "agent_strategy_heatmap.png").exists()
