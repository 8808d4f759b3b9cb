"""``harness probe``: measure how any MCP server over stdio reports errors.

The probe starts the server command, drives it through a table of rules
(:data:`harness.probe.rules.RULES`: the handshake gate, malformed envelopes,
unknown methods and tools, invalid arguments under two protocol versions,
version negotiation, pagination, ping, and the user's failing tool calls), and
reports for each rule what the reference and the current spec expect, what the
server did, and a verdict. Every exchange has a timeout; nothing the server
does (silence, garbage, exiting) can make the probe hang or raise.
"""

from harness.probe.outcomes import GENERIC_WORDS, VERDICTS, Expect, Outcome, reason_present, verdict
from harness.probe.report import REPORT_FORMAT, Report, RuleResult, render_table
from harness.probe.rules import RULES, Rule, all_rules
from harness.probe.runner import ProbeConfig, run_probe
from harness.probe.steps import ToolCase

__all__ = [
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
    "reason_present",
    "render_table",
    "run_probe",
    "verdict",
]
