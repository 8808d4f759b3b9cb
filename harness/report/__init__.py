"""From a session table to what a reader sees: comparison statistics and plots.

:mod:`.stats` computes the strategy comparison; :mod:`.plots` draws it. Names load on
first use (matplotlib is slow to import, and ``harness compare`` never needs it).
"""

import importlib
from typing import Any

_HOMES = {
    "compare": "stats",
    "display_frame": "stats",
    "mcnemar": "stats",
    "pass_hat_k": "stats",
    "to_markdown": "stats",
    "FIGURES": "plots",
    "draw_all": "plots",
}

__all__ = ["FIGURES", "compare", "display_frame", "draw_all", "mcnemar", "pass_hat_k", "to_markdown"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness.report' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.report.{home}"), name)
