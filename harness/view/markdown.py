"""Markdown tables read back into rows: the page shows what a command prints, cell for cell."""

from __future__ import annotations

from typing import Any

WARNING = "> **Warning:**"


def _cells(line: str, width: int | None = None) -> list[str]:
    """A row's cells; a ``|`` inside a cell (``(|Δ| < 0.1)``, which the table does not escape) is
    put back where the row has more cells than the table's rule has columns."""
    parts = line.strip().strip("|").split("|")
    while width is not None and len(parts) > width:
        opened = next((i for i, p in enumerate(parts[:-1]) if p.count("(") > p.count(")")), None)
        if opened is None:
            break
        parts[opened : opened + 2] = [parts[opened] + "|" + parts[opened + 1]]
    return [c.strip().strip("`") for c in parts]


def tables(text: str) -> dict[str, Any]:
    """Every table in ``text`` with the prose line above it as its title, and the warnings.

    ``{"tables": [{"title", "columns", "rows"}], "warnings": [...], "notes": [...]}``; a table is
    a run of lines that start with ``|`` (header, rule, rows).
    """
    out: list[dict[str, Any]] = []
    warnings: list[str] = []
    notes: list[str] = []
    title = ""
    block: list[str] = []

    def close() -> None:
        nonlocal title
        if len(block) >= 2:
            width = len(_cells(block[1]))  # the rule row: |---|---|
            rows = [_cells(ln, width) for ln in block[2:]]
            out.append({"title": title, "columns": _cells(block[0], width), "rows": rows})
            title = ""
        block.clear()

    for line in text.splitlines():
        if line.startswith("|"):
            block.append(line)
            continue
        close()
        if line.startswith(WARNING):
            warnings.append(line[len(WARNING) :].strip())
        elif line.strip():
            if title:
                notes.append(title)
            title = line.strip()
    close()
    if title:
        notes.append(title)
    return {"tables": out, "warnings": warnings, "notes": notes}


def first_table(text: str) -> dict[str, Any]:
    """The first table of ``text`` as ``{"columns", "rows", "notes"}`` (empty when there is none)."""
    found = tables(text)
    if not found["tables"]:
        return {"columns": [], "rows": [], "notes": found["notes"]}
    first = found["tables"][0]
    return {"columns": first["columns"], "rows": first["rows"], "notes": found["notes"]}
