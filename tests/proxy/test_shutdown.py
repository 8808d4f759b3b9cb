"""``harness proxy`` stops as real clients stop it: no id unanswered, no server left behind.

The official SDK clients and the MCP Inspector close a stdio server by ending its input and,
two seconds later, sending SIGTERM (then SIGKILL). Here the proxy is driven so, as a process,
in front of ``tests/peers/slow_exit_server.py``: a server that lingers after its input ends,
ignores SIGTERM (for a while, or for ever), or leaves a child behind. Each order (end of input
then SIGTERM, SIGTERM alone, SIGINT alone) must end with exit 0, the summary on stderr and in
the trace, every request in flight answered, and nothing of the server's left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.helpers.escaping import sigterm_with_an_escaped_daemon
from tests.proxy.conftest import HARNESS, PEERS, REPO, LiveProxy, start_http

pytestmark = pytest.mark.timeout(180)

SLOW = ("python", str(PEERS / "slow_exit_server.py"))
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
HANG = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}
ADD = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"x": 2, "y": 3}},
}

SERVERS = {
    "lingers after its input ends": ("--linger", "30", "--term", "0.5"),
    "ignores SIGTERM for ever": ("--linger", "inf", "--term", "inf"),
    "leaves a child behind": ("--child",),
}


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def left(pids_file: Path, wait: float = 10.0) -> list[int]:
    """The server's processes still running after ``wait`` seconds at most."""
    pids = [int(x) for x in pids_file.read_text().split()] if pids_file.exists() else []
    assert pids, "the server never started"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return []
        time.sleep(0.1)
    running = [p for p in pids if alive(p)]
    for pid in running:  # leave nothing for the next test either
        os.kill(pid, signal.SIGKILL)
    return running


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path: Path) -> Iterator[None]:
    """Whatever a failing test leaves of its servers is killed, so that it harms no other test."""
    yield
    pids = tmp_path / "pids"
    for pid in [int(x) for x in pids.read_text().split()] if pids.exists() else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class Proxy:
    """``harness proxy --trace T [OPTIONS] -- slow_exit_server ...`` with our hands on its pipes."""

    def __init__(self, tmp: Path, server: tuple[str, ...], *options: str) -> None:
        self.pids = tmp / "pids"
        self.trace = tmp / "trace.jsonl"
        argv = [
            *HARNESS,
            "proxy",
            "--trace",
            str(self.trace),
            *options,
            "--",
            *SLOW,
            *server,
            "--pids",
            str(self.pids),
        ]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
        )
        assert self.process.stdin is not None and self.process.stdout is not None

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        for message in messages:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the proxy closed its output"
        reply: dict[str, Any] = json.loads(line)
        return reply

    def started(self) -> None:
        """The handshake done, a call that never ends in flight, one that ends answered."""
        self.send(INIT, INITIALIZED)
        assert self.read()["id"] == 1
        self.send(HANG, ADD)
        assert self.read() == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"content": [{"type": "text", "text": "5"}]},
        }
        while not self.pids.exists():
            time.sleep(0.05)

    def close_input(self) -> None:
        """End the proxy's stdin, as a client closing the connection does."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.stdin = None

    def end(self, timeout: float = 60.0) -> tuple[int, list[dict[str, Any]], str]:
        """Wait for the proxy to exit: its status, what else it wrote to the client, its stderr."""
        out, err = self.process.communicate(timeout=timeout)
        replies = [json.loads(line) for line in out.splitlines() if line.strip()]
        return self.process.returncode, replies, err.decode()

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.trace.read_text().splitlines()]


def stopped_cleanly(proxy: Proxy, code: int, replies: list[dict[str, Any]], err: str, why: str) -> None:
    assert code == 0, err
    assert "harness: aborted" not in err and "Traceback" not in err
    (hang,) = [r for r in replies if r.get("id") == 2]
    assert hang["error"]["code"] == -32603
    assert f"the proxy stopped ({why}) before the upstream server answered" == hang["error"]["message"]
    summary = [line for line in err.splitlines() if line.startswith("harness proxy: summary: ")]
    assert len(summary) == 1
    counted = json.loads(summary[0].removeprefix("harness proxy: summary: "))
    assert counted["calls"] == 2 and counted["upstream"] == {"stopped": 1}
    records = proxy.records()
    assert records[-1]["summary"] == counted
    assert {"why": why, "unanswered": [2]} in [r.get("stop") for r in records]
    assert left(proxy.pids) == []


@pytest.mark.parametrize("server", SERVERS.values(), ids=SERVERS.keys())
def test_end_of_input_then_sigterm_as_the_sdk_clients_do(tmp_path: Path, server: tuple[str, ...]) -> None:
    proxy = Proxy(tmp_path, server, "--timeout", "0")  # no limit: only the stop answers the hang
    proxy.started()
    proxy.close_input()
    time.sleep(2.0)  # what the TypeScript SDK and the Inspector wait before SIGTERM
    proxy.process.send_signal(signal.SIGTERM)
    code, replies, err = proxy.end()
    stopped_cleanly(proxy, code, replies, err, "SIGTERM")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("server", SERVERS.values(), ids=SERVERS.keys())
def test_a_signal_alone_stops_the_proxy_and_its_server(
    tmp_path: Path, server: tuple[str, ...], sig: signal.Signals
) -> None:
    proxy = Proxy(tmp_path, server)
    proxy.started()
    started = time.monotonic()
    proxy.process.send_signal(sig)
    code, replies, err = proxy.end()
    stopped_cleanly(proxy, code, replies, err, sig.name)
    # The SDK clients send SIGKILL two seconds after SIGTERM: the proxy is done well before.
    assert time.monotonic() - started < 30


def test_sigterm_before_the_client_sent_anything_still_stops_the_server(tmp_path: Path) -> None:
    proxy = Proxy(tmp_path, SERVERS["ignores SIGTERM for ever"])
    while not proxy.pids.exists():
        time.sleep(0.05)
    proxy.process.send_signal(signal.SIGTERM)
    code, replies, err = proxy.end()
    assert code == 0, err
    assert replies == [] and "harness proxy: summary: " in err
    assert left(proxy.pids) == []


def test_end_of_input_alone_answers_what_waits_and_stops_the_server(tmp_path: Path) -> None:
    proxy = Proxy(tmp_path, SERVERS["ignores SIGTERM for ever"], "--timeout", "1")
    proxy.started()
    proxy.close_input()
    code, replies, err = proxy.end()
    assert code == 0, err
    (hang,) = [r for r in replies if r.get("id") == 2]
    assert hang["error"]["message"] == "the upstream server did not answer within 1 s"
    assert left(proxy.pids) == []


KILLED_CLIENT = """
import sys, anyio
from mcp import Client

async def main() -> None:
    async with Client(sys.argv[1], mode="legacy", read_timeout_seconds=300) as client:
        print("calling", flush=True)
        await client.call_tool("hang", {})

anyio.run(main)
"""


def test_http_sessions_whose_clients_went_away_are_closed_and_their_servers_stopped(
    tmp_path: Path, live: list[LiveProxy]
) -> None:
    pids = tmp_path / "pids"
    server = (*SLOW, "--linger", "inf", "--term", "inf", "--pids", str(pids))
    front = start_http([*HARNESS, "proxy", "--http", "--port", "0", "--session-idle", "3", "--", *server])
    live.append(front)
    # Three official SDK clients, each killed in the middle of a call that never ends.
    clients = [
        subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, front.url], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    for client in clients:
        assert client.stdout is not None and client.stdout.readline() == "calling\n"
    time.sleep(1.0)  # the calls are in flight
    for client in clients:
        client.kill()
        client.communicate()
    assert len(pids.read_text().split()) == 3
    assert left(pids, wait=20) == []
    # A fourth opens its session and says nothing more: it is closed once idle.
    with httpx.Client(timeout=30) as http:
        opened = http.post(front.url, json=INIT, headers={"Accept": "application/json, text/event-stream"})
        assert opened.status_code == 200
    started = time.monotonic()
    while len(pids.read_text().split()) < 4:
        time.sleep(0.05)
    assert left(pids, wait=30) == []
    assert time.monotonic() - started >= 2.5  # not before its --session-idle
    front.process.send_signal(signal.SIGTERM)
    err = front.stop()
    assert front.process.returncode == 0, err
    (line,) = [x for x in err.splitlines() if x.startswith("harness proxy: summary: ")]
    summary = json.loads(line.removeprefix("harness proxy: summary: "))
    assert summary["connections"] == 4
    assert summary["abandoned"] == {"client gone": 3, "idle": 1}
    assert summary["upstream"] == {"stopped": 3}  # each dropped call answered at the stop


def test_a_server_killed_under_the_proxy_is_reported_by_its_signal_not_its_banner(tmp_path: Path) -> None:
    proxy = Proxy(tmp_path, ("--banner", "Starting default (STDIO) server..."))
    proxy.started()
    (pid,) = [int(x) for x in proxy.pids.read_text().split()]
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    proxy.send({**ADD, "id": 4})
    reply = proxy.read()
    assert reply["id"] in (2, 4)
    while reply["id"] != 4:
        reply = proxy.read()
    assert reply["error"]["message"] == "the upstream server was killed by SIGKILL (exit status -9)"
    proxy.close_input()
    code, _, err = proxy.end()
    assert code == 0 and "Starting default" not in err.split("summary:")[-1]
    summary = json.loads(err.split("harness proxy: summary: ")[-1].splitlines()[0])
    assert summary["calls"] == 3  # the one sent to a dead server is counted too


def test_with_no_time_limit_the_end_of_input_still_answers_a_hung_call(tmp_path: Path) -> None:
    # --timeout 0 and a hung server: the end of input waited ~34 s, then answered nothing.
    import io

    from harness.proxy.run import ProxyConfig, TraceFile, make_link
    from harness.proxy.stdio import serve_proxy_stdio

    pids = tmp_path / "pids"
    config = ProxyConfig(
        command=(sys.executable, str(PEERS / "slow_exit_server.py"), "--term", "inf", "--pids", str(pids)),
        timeout=None,
        stop_grace=0.2,
    )
    stdin = io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, INITIALIZED, HANG)))
    stdout = io.BytesIO()
    started = time.monotonic()
    summary = serve_proxy_stdio(
        lambda sink: make_link(config, sink, trace=TraceFile(None), warn=lambda _: None, warned=set()),
        stdin,
        stdout,
        drain=0.5,
    )
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    (hang,) = [r for r in replies if r.get("id") == 2]
    assert hang["error"]["message"] == "the proxy stopped (end of input) before the upstream server answered"
    assert summary["upstream"] == {"stopped": 1}
    assert time.monotonic() - started < 20
    assert left(pids) == []


def test_sigterm_stops_the_proxy_though_an_escaped_daemon_holds_the_servers_pipes() -> None:
    """Issue 49, item 4: the server started a ``setsid`` daemon that keeps its output open. On
    SIGTERM the proxy ends the server's group, stops reading, exits 0 within its graces, and its
    summary names the daemon it could not end."""
    stopped = sigterm_with_an_escaped_daemon()
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.took_s < 6.0  # two graces of a second and the readers' join, with room for a busy machine
    assert any("escaping_server" in held for held in stopped.summary.get("not_ended", [])), stopped.stderr
