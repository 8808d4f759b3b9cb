"""A hostile local client against ``harness proxy``, end to end, in well under a minute (issue 49).

Every request is bounded (a timeout each, loopback only). Against ``proxy --http`` it opens
sessions past ``--max-sessions`` in bursts, ends them, and sends bodies past ``--max-message``;
against the stdio proxy it sends SIGTERM while a ``setsid`` grandchild of the server holds the
server's pipes. What it checks is what a user of the machine would see: the processes under
the proxy never pass the cap and go back to none, the proxy's resident memory stays where it
was (measured, not timed), and the stop is honoured with its summary.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.helpers.escaping import sigterm_with_an_escaped_daemon
from tests.proxy.conftest import HARNESS, LiveProxy, start_http

PEERS = Path(__file__).resolve().parents[1] / "peers"
REPO = Path(__file__).resolve().parents[2]
CAP = 3
MAX_MESSAGE = 64 * 1024
BURSTS = 3
BURST = 12
"""Initializes per burst, four times the cap."""
RSS_SLACK = 40 * 1024 * 1024
"""How much the proxy's resident memory may grow over the whole attack: allocator noise, far
below the 10 MiB x bodies it is sent (a proxy that held them would grow by hundreds of MiB)."""

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "h", "version": "0"}},
}  # fmt: skip
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _under(pid: int) -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        children: list[psutil.Process] = psutil.Process(pid).children(recursive=True)
        return children
    return []


def _servers(pid: int) -> int:
    """The live ``harness serve`` processes under the proxy (a zombie is not a server)."""
    count = 0
    for proc in _under(pid):
        with contextlib.suppress(psutil.Error):
            if proc.status() != psutil.STATUS_ZOMBIE and "serve" in proc.cmdline():
                count += 1
    return count


def _settled(pid: int, at_most: int, polls: int = 100) -> int:
    """The servers under the proxy once they are at most ``at_most`` (polled a bounded number of
    times, 50 ms apart: a stopped server takes a moment to go)."""
    for _ in range(polls):
        count = _servers(pid)
        if count <= at_most:
            return count
        time.sleep(0.05)
    return _servers(pid)


@pytest.mark.timeout(60)
def test_bursts_past_the_cap_and_bodies_past_the_limit_leave_the_proxy_as_it_was() -> None:
    proxy: LiveProxy = start_http(
        [*HARNESS, "proxy", "--http", "--port", "0", "--max-sessions", str(CAP), "--max-message",
         str(MAX_MESSAGE), "--", *HARNESS, "serve", "--demo"]
    )  # fmt: skip
    pid = proxy.process.pid
    try:
        with httpx.Client(timeout=20) as client:
            client.post(proxy.url, content=b"{}", headers=HEADERS)  # warm the front's code paths
            rss_before = psutil.Process(pid).memory_info().rss
            for _ in range(BURSTS):
                answers = [client.post(proxy.url, json=INITIALIZE, headers=HEADERS) for _ in range(BURST)]
                codes = [a.status_code for a in answers]
                assert codes.count(200) == CAP and codes.count(503) == BURST - CAP, codes
                assert _servers(pid) <= CAP
                for answer in answers:
                    sid = answer.headers.get("mcp-session-id")
                    if sid:
                        client.delete(proxy.url, headers={**HEADERS, "Mcp-Session-Id": sid})
                assert _settled(pid, 0) == 0  # every ended session's server is gone
            huge = json.dumps({**INITIALIZE, "pad": "x" * (10 * 1024 * 1024)}).encode()
            for _ in range(10):
                answer = client.post(proxy.url, content=huge, headers=HEADERS)
                assert answer.status_code == 413 and answer.json()["error"]["code"] == -32600
            assert _servers(pid) == 0  # an oversized initialize starts nothing
            rss_after = psutil.Process(pid).memory_info().rss
        assert rss_after - rss_before < RSS_SLACK, (rss_before, rss_after)
    finally:
        err = proxy.stop()
    assert "Traceback" not in err
    assert proxy.process.returncode == 0, err


@pytest.mark.timeout(60)
def test_sigterm_with_an_escaped_grandchild_holding_the_pipes_is_honoured_with_its_summary() -> None:
    stopped = sigterm_with_an_escaped_daemon()
    assert stopped.returncode == 0, stopped.stderr
    assert any("escaping_server" in held for held in stopped.summary.get("not_ended", [])), stopped.stderr
