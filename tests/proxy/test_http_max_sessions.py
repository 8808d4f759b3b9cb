"""The HTTP front refuses sessions past ``max_sessions`` before starting an upstream (issue 49, item 1)."""

import asyncio
from typing import Any

import httpx
import psutil
import pytest

from harness.proxy import http as front
from tests.proxy.conftest import HARNESS, LiveProxy, start_http


class _Link:
    started = 0

    def start(self) -> None:
        _Link.started += 1


def test_open_past_the_cap_is_refused_and_starts_no_upstream() -> None:
    proxy = front.ProxyHTTP(lambda sink, n: _Link(), max_sessions=2)  # type: ignore[arg-type,return-value]
    _Link.started = 0

    async def go() -> Any:
        for sid in ("a", "b"):
            proxy.sessions[sid] = await proxy._open(sid)
        with pytest.raises(front._Refuse) as refused:
            await proxy._open("c")
        if proxy._reaper is not None:
            proxy._reaper.cancel()
        return refused.value

    refused = asyncio.run(go())
    assert _Link.started == 2
    assert refused.response().status_code == 503


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_harness_proxy_max_sessions_refuses_past_the_cap_and_starts_no_server(live: list[LiveProxy]) -> None:
    """Through the CLI: two sessions, the third refused, and the proxy has exactly two server children."""
    proxy = start_http(
        [*HARNESS, "proxy", "--http", "--port", "0", "--max-sessions", "2", "--", *HARNESS, "serve", "--demo"]
    )
    live.append(proxy)
    with httpx.Client(timeout=30) as client:
        first = [client.post(proxy.url, json=INITIALIZE, headers=HEADERS) for _ in range(2)]
        assert [answer.status_code for answer in first] == [200, 200]
        third = client.post(proxy.url, json=INITIALIZE, headers=HEADERS)
    assert third.status_code == 503
    body = third.json()
    assert body["id"] == 1 and "error" in body and "2" in body["error"]["message"]
    children = psutil.Process(proxy.process.pid).children()
    assert len(children) == 2


@pytest.mark.parametrize("params", [None, [], {}, {"protocolVersion": 7}])
def test_an_initialize_no_server_could_accept_starts_no_server(live: list[LiveProxy], params: Any) -> None:
    """Upstreams start lazily: only a well-formed initialize costs a process (issue 49)."""
    proxy = start_http([*HARNESS, "proxy", "--http", "--port", "0", "--", *HARNESS, "serve", "--demo"])
    live.append(proxy)
    message = {k: v for k, v in INITIALIZE.items() if k != "params"}
    if params is not None:
        message["params"] = params
    with httpx.Client(timeout=30) as client:
        answer = client.post(proxy.url, json=message, headers=HEADERS)
    assert answer.status_code == 400
    assert answer.json()["id"] == 1 and answer.json()["error"]["code"] == -32602
    assert psutil.Process(proxy.process.pid).children() == []
