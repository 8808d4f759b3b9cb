"""Interop: probe the TypeScript reference server ``@modelcontextprotocol/server-everything``.

The server (pinned in ``package.json`` beside this file) is installed with npm into
``.cache/probe``, as ``tests/conformance`` installs its suite; the test skips, saying why, when
``npx``/``npm`` are missing or the registry is out of reach. It is one of the servers issue 20
probed by hand: it answers a request before ``initialize`` (which the spec allows) and does not
speak 2026-07-28 (``server/discover`` is an unknown method to it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.npm import npm_install

from harness.probe import ProbeConfig, Report, run_probe
from harness.probe.outcomes import AS_SPEC, BASIS_SPEC, NO_REPLY, NOT_RUN, RESULT
from harness.probe.rules import HANDSHAKE_ERA, STATELESS_ERA

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("HARNESS_PROBE_CACHE", HERE.parent.parent / ".cache" / "probe"))
PIN = HERE / "package.json"
PACKAGE = "@modelcontextprotocol/server-everything"

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def everything() -> Report:
    """The probe's report on the pinned server, installed first if it is not there yet."""
    if shutil.which("npx") is None or shutil.which("npm") is None:
        pytest.skip("npx/npm are not installed, so server-everything cannot be installed")
    npm_install(CACHE, PIN, PACKAGE)
    command = (str(CACHE / "node_modules" / ".bin" / "mcp-server-everything"), "stdio")
    return run_probe(ProbeConfig(command, timeout=5.0, startup_timeout=60.0))


def test_it_is_probed_to_the_end(everything: Report) -> None:
    assert everything.server is not None and everything.server["name"] == "mcp-servers/everything"
    assert not any(row.observed == NOT_RUN for row in everything.rules)
    # Like the Python SDK, it never answers id null, "jsonrpc": "1.0" or truncated JSON.
    assert [r.id for r in everything.rules if r.observed == NO_REPLY] == [
        "envelope.id_null",
        "envelope.jsonrpc_1_0",
        "envelope.unparseable",
    ]


def test_answering_before_initialize_meets_the_spec(everything: Report) -> None:
    row = everything.row("handshake.before_initialize")
    assert (row.observed, row.verdict, row.basis) == (RESULT, AS_SPEC, BASIS_SPEC)


def test_it_speaks_the_handshake_era_only(everything: Report) -> None:
    assert everything.spoken(HANDSHAKE_ERA) and not everything.spoken(STATELESS_ERA)
    assert everything.eras is not None
    assert everything.eras[STATELESS_ERA]["evidence"] == "server/discover: error -32601: Method not found"
    assert {row.era for row in everything.rules} == {HANDSHAKE_ERA}


def test_a_mistyped_argument_is_answered_about_that_argument(everything: Report) -> None:
    row = everything.row("args.wrong_type@2025-11-25")
    assert row.detail.startswith('echo {"message":12345} -> ')
    assert row.verdict == AS_SPEC
