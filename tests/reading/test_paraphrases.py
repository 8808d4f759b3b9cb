"""Does the reader read a second wording of a template message the way it reads the template?

Every template message the shipped families can send has three wordings of the same information,
written by someone who never saw the reader (tests/data/paraphrases.toml), with what a careful
person takes from each. The reader (harness.reading, developed on real servers' errors without
the templates) reads the template and each paraphrase; its category and argument must agree on
at least 90 % of the pairs. This test can fail: when it does, the reader's reading depends on
the wording, and that is a finding about the reader, to be fixed (if at all) by what real
servers write, never by fitting these texts.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from harness.reading import read

PARAPHRASES = Path(__file__).resolve().parents[1] / "data" / "paraphrases.toml"
VALUES: dict[str, Any] = {
    "tool": "weather", "argument": "date", "valid": "2025-03-14", "got": "14/3/2025", "max": 5,
    "retry_after": 5, "timeout": 30, "wrong": "03-14-2025",
}  # fmt: skip
ARGUMENTS = {"date": "14/3/2025", "city": "Oslo"}
AGREEMENT = 0.90


def _pairs() -> list[dict[str, Any]]:
    return list(tomllib.loads(PARAPHRASES.read_text(encoding="utf-8"))["paraphrase"])


def agreement() -> tuple[float, float]:
    """(share of pairs read alike, share of paraphrases read as their writer reads them)."""
    alike = as_written = 0
    pairs = _pairs()
    for pair in pairs:
        template = read(pair["original"].format(**VALUES), arguments=ARGUMENTS)
        reworded = read(pair["text"].format(**VALUES), arguments=ARGUMENTS)
        alike += (template.category, template.argument) == (reworded.category, reworded.argument)
        named = "date" if pair.get("argument") else None
        as_written += (reworded.category, reworded.argument) == (pair["category"], named)
    return alike / len(pairs), as_written / len(pairs)


@pytest.mark.xfail(
    strict=True,
    reason="a finding (docs/reading.md): the reader, developed on real servers' errors, reads 70% of "
    "the pairs alike and 48% of the paraphrases as their writer does; strict, so a reader that reaches "
    "90% makes this fail until the marker goes",
)
def test_the_reader_reads_a_second_wording_as_it_reads_the_template() -> None:
    alike, _ = agreement()
    assert alike >= AGREEMENT, f"category and argument agree on {alike:.0%} of the pairs"
