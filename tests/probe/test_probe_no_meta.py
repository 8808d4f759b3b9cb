"""Issue 25, item 9: ``stateless.no_meta`` must not fault an answer ``handshake.before_initialize`` accepts.

Both rules send the same message: ``tools/list`` with no ``_meta`` on a connection that never
saw ``initialize``. ``tests/peers/dual_open_server.py`` speaks both eras with no handshake gate:
before the fix its answer (a result, or a refusal with -32002) was "as spec" in the handshake row
and "differs" in the stateless row. Now the two rows share what they accept, for every set of
eras a server may speak.
"""

from __future__ import annotations

import itertools

import pytest
from probe_runs import DUAL_OPEN, Probes

from harness.probe.outcomes import (
    AS_BOTH,
    AS_SPEC,
    DIFFERS,
    EMPTY_RESULT,
    NO_REPLY,
    NO_RESULT_TYPE,
    REFUSED,
    RESULT,
    verdict,
)
from harness.probe.rules import (
    ERAS,
    HANDSHAKE_ERA,
    RULES,
    STATELESS_ERA,
    Rule,
    stateless_rules,
)

pytestmark = pytest.mark.timeout(240)

BEFORE = next(r for r in RULES if r.id == "handshake.before_initialize")
NO_META = next(r for r in stateless_rules() if r.id == "stateless.no_meta")
LABELS = (
    RESULT,
    EMPTY_RESULT,
    NO_RESULT_TYPE,
    NO_REPLY,
    REFUSED,
    *(f"error {c}" for c in (-32600, -32602, -32002, -32603)),
)
ACCEPTED = (AS_SPEC, AS_BOTH)
# The stateless row exists only where the stateless era is spoken.
SPOKEN = [frozenset({STATELESS_ERA}), frozenset(ERAS)]


def _verdict(rule: Rule, label: str, spoken: frozenset[str]) -> str:
    return verdict(label, rule.reference, rule.spec_given(None, spoken))


class TestTheRulesAgree:
    @pytest.mark.parametrize(("label", "spoken"), list(itertools.product(LABELS, SPOKEN)))
    def test_what_before_initialize_accepts_no_meta_accepts(self, label: str, spoken: frozenset[str]) -> None:
        if _verdict(BEFORE, label, spoken) in ACCEPTED:
            assert _verdict(NO_META, label, spoken) in ACCEPTED, (label, sorted(spoken))

    def test_a_dual_era_server_may_answer_or_refuse_either(self) -> None:
        dual = frozenset(ERAS)
        before, no_meta = BEFORE.spec_given(None, dual), NO_META.spec_given(None, dual)
        assert before is not None and no_meta is not None
        assert before.accepts == no_meta.accepts and not no_meta.required

    def test_a_server_that_speaks_only_2026_must_refuse_both_with_32602(self) -> None:
        only = frozenset({STATELESS_ERA})
        for rule in (BEFORE, NO_META):
            assert _verdict(rule, "error -32602", only) in ACCEPTED
            assert _verdict(rule, RESULT, only) not in ACCEPTED

    def test_a_handshake_server_keeps_the_open_rule(self) -> None:
        only = frozenset({HANDSHAKE_ERA})
        assert _verdict(BEFORE, RESULT, only) == AS_SPEC
        assert _verdict(BEFORE, "error -32600", only) == AS_BOTH


@pytest.mark.parametrize(
    ("argv", "observed", "expected"),
    [
        ((), RESULT, AS_SPEC),  # no gate: a handshake-era request is answered at any time
        (("--bare", "-32002"), "error -32002", AS_SPEC),  # refused with a code of its own
        (("--bare", "-32600"), "error -32600", None),  # ours: as reference & spec, and as spec
        (("--no-handshake", "--bare", "-32602"), "error -32602", AS_SPEC),  # 2026-07-28 only
        (("--no-handshake",), RESULT, DIFFERS),  # 2026-07-28 only, yet answers: both rows fault it
    ],
    ids=["dual-answers", "dual-refuses-32002", "dual-refuses-32600", "modern-refuses", "modern-answers"],
)
def test_the_same_answer_gets_the_same_judgement_in_both_rows(
    probes: Probes, argv: tuple[str, ...], observed: str, expected: str | None
) -> None:
    assert argv in DUAL_OPEN
    report = probes.get(f"dual_open {' '.join(argv)}".strip())
    assert report.spoken(STATELESS_ERA)
    assert report.spoken(HANDSHAKE_ERA) == ("--no-handshake" not in argv)
    before, no_meta = report.row("handshake.before_initialize"), report.row("stateless.no_meta")
    assert before.observed == no_meta.observed == observed
    if expected is None:
        assert (before.verdict, no_meta.verdict) == (AS_BOTH, AS_SPEC)
    else:
        assert before.verdict == no_meta.verdict == expected
