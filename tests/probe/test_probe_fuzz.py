"""Whatever a server sends, reading it never crashes and always gives a label from the vocabulary.

The probe reads replies, schemas and input requests written by servers it does not trust; these
properties hold for any JSON a server could send.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.probe.outcomes import (
    DISCOVERED,
    INPUT_REQUIRED,
    MALFORMED,
    MALFORMED_DISCOVER,
    MALFORMED_INPUT,
    NO_RESULT_TYPE,
    UNSUPPORTED_NO_LIST,
    Outcome,
    classify_reply,
    classify_stateless,
)
from harness.probe.steps import (
    _accepted,
    classify_discover,
    classify_unsupported,
    input_responses,
    sample_value,
    schema_types,
    wrong_value,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KEYS = st.sampled_from(
    ["result", "error", "resultType", "inputRequests", "requestState", "method", "params", "content",
     "isError", "supportedVersions", "capabilities", "code", "data", "supported", "type", "anyOf",
     "oneOf", "enum", "const", "default", "requestedSchema", "properties", "mode", "text"]
)  # fmt: skip
SHAPED = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=12)
    | st.sampled_from(
        ["input_required", "complete", "2026-07-28", "elicitation/create", "string", "null", "integer"]
    ),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=4), inner, max_size=5)
    ),
    max_leaves=30,
)
"""JSON built from the keys and values the probe looks at, so the interesting branches are reached."""

LABELS = (DISCOVERED, INPUT_REQUIRED, MALFORMED, MALFORMED_DISCOVER, MALFORMED_INPUT, NO_RESULT_TYPE)


def _known(outcome: Outcome) -> bool:
    label = outcome.label
    known = {"result", "empty result", "isError with reason", "isError masked", UNSUPPORTED_NO_LIST, *LABELS}
    return label in known or label.startswith("error ")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, SHAPED, max_size=4) | st.dictionaries(st.text(max_size=6), JSON, max_size=4))
def test_every_reply_gets_a_known_label(message: dict[str, Any]) -> None:
    for classify in (classify_reply, classify_stateless, classify_discover, classify_unsupported):
        said = classify(message)
        assert _known(said), (classify.__name__, said)
        assert "\n" not in said.detail and len(said.detail) <= 100


@settings(max_examples=300, deadline=None)
@given(SHAPED | JSON)
def test_a_wrong_value_is_never_one_the_schema_accepts(prop: Any) -> None:
    types = schema_types(prop)
    wrong = wrong_value(prop)
    if types is None:
        assert wrong is None
    elif wrong is not None:
        assert not _accepted(wrong, types)
    sample_value(prop)  # never raises


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, SHAPED, max_size=4))
def test_input_responses_answer_only_what_was_asked(result: dict[str, Any]) -> None:
    answers = input_responses(result)
    asked = result.get("inputRequests")
    assert set(answers) <= set(asked if isinstance(asked, dict) else {})
