"""The harvested source: a real server's own text, from the corpus's dev split, for upstream faults."""

from __future__ import annotations

import json
from pathlib import Path

from harness.faults.sources import HARVESTED_CATEGORIES, fits, harvested_text, harvested_texts

CORPUS = Path(__file__).resolve().parents[2] / "harness" / "fixtures" / "data" / "corpus"


def test_harvested_texts_are_dev_texts_of_the_kind_s_categories() -> None:
    rows = [json.loads(line) for line in (CORPUS / "messages.jsonl").read_text().splitlines() if line.strip()]
    train = {r["text"] for r in rows if r["server"] in ("server-filesystem", "server-memory")}
    for kind, categories in HARVESTED_CATEGORIES.items():
        texts = {harvested_text(kind, n) for n in range(50)}
        assert texts and None not in texts, kind
        pool = {t for c in categories for t in harvested_texts().get(c, ())}
        assert texts <= pool and not texts & train, kind


def test_an_argument_fault_has_no_harvested_text_and_a_family_never_gives_it_one() -> None:
    assert harvested_text("bad_argument", 0) is None
    assert not fits("harvested", "bad_argument") and fits("harvested", "transient")
    assert fits("pydantic", "bad_argument")
