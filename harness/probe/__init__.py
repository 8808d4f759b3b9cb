"""``harness probe``: measure how any MCP server reports errors, in each era it speaks.

The probe starts the server command (stdio) or connects to its URL (Streamable HTTP,
:mod:`harness.probe.http_link`), drives it through a table of rules
(:data:`harness.probe.rules.RULES`: the handshake gate, malformed envelopes,
unknown methods and tools, invalid arguments under two protocol versions,
version negotiation, pagination, ping, and the user's failing tool calls), and,
where ``server/discover`` says the server speaks 2026-07-28, through the
stateless era's rules (:func:`harness.probe.rules.stateless_rules`: per-request
``_meta``, a request without it, an unsupported version, MRTR). It reports for
each rule what the reference and the current spec expect, what the server did,
a verdict and its basis. A verdict on argument validation needs evidence that the
server read the arguments (:mod:`harness.probe.evidence`), else it is "inconclusive".
Every exchange has a timeout; nothing the server does (silence, garbage, exiting,
answering late) can make the probe hang or raise.
"""

from harness.probe.outcomes import GENERIC_WORDS, VERDICTS, Expect, Outcome, basis, reason_present, verdict
from harness.probe.report import REPORT_FORMAT, Report, RuleResult, render_table
from harness.probe.rules import ERAS, RULES, Rule, all_rules, stateless_rules
from harness.probe.runner import ProbeConfig, run_probe
from harness.probe.steps import ToolCase

__all__ = [
    "ERAS",
    "GENERIC_WORDS",
    "REPORT_FORMAT",
    "RULES",
    "VERDICTS",
    "Expect",
    "Outcome",
    "ProbeConfig",
    "Report",
    "Rule",
    "RuleResult",
    "ToolCase",
    "all_rules",
    "basis",
    "reason_present",
    "render_table",
    "run_probe",
    "stateless_rules",
    "verdict",
]
