"""Finished runs edited by hand, as tests need them.

Why: a finished run records ``sessions.parquet``'s sha256, and every reader refuses a
table whose bytes changed. A test that edits the table to show a *later* check (a key
twice, a corrupt file, an old row version) makes the run look like one written before
the digest existed, which is what such a table would be in the field.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.batch.results import DIGEST_KEY


def forget_digest(run: Path) -> None:
    """Drop the table's recorded sha256 from ``run``'s manifest, as a run from before it had."""
    path = run / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.pop(DIGEST_KEY, None)
    path.write_text(json.dumps(manifest))
