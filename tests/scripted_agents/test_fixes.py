"""What a scripted agent makes of an expected form: the bound, the sent value rewritten to fit, the choice."""

from __future__ import annotations

from typing import Any

import pytest

from scripted_agents.fixes import fix_value


@pytest.mark.parametrize(
    ("current", "expected", "kind", "fixed"),
    [
        ("14/03/2025", r"^\d{4}-\d{2}-\d{2}$", "string", "2025-03-14"),
        ("3/9/2025", "YYYY-MM-DD", "string", "2025-09-03"),
        ("nok", r"^[A-Z]{3}$", "string", "NOK"),
        ("oslo", r"^[A-Z][a-z]+(?: [A-Z][a-z]+)*$", "string", "Oslo"),
        ("new york", r"^[A-Z][a-z]+(?: [A-Z][a-z]+)*$", "string", "New York"),
        (25, "<= 10", "integer", 10),
        (25, "less than or equal to 3", "integer", 3),
        (25, "at most 5", "integer", 5),
        (25, "maximum of 7", "integer", 7),
        (25, "< 10", "integer", 9),
        (0, ">= 1", "integer", 1),
        ("nok", "one of: EUR, NOK, USD", "string", "NOK"),
        ("x", "'2025-03-14'", "string", "2025-03-14"),
        ("12", "integer", "integer", 12),
    ],
)
def test_a_fix_comes_from_the_expected_form_and_the_sent_value(
    current: Any, expected: str, kind: str, fixed: Any
) -> None:
    assert fix_value(current, expected, kind) == fixed


@pytest.mark.parametrize(
    ("current", "expected"),
    [("many", "integer"), ("x", "a sentence that says nothing usable"), ("abc", r"^\d+$"), ("x", None)],
)
def test_no_fix_where_nothing_tried_fits(current: Any, expected: str | None) -> None:
    assert fix_value(current, expected, "string") is None
