"""The HTTP front refuses sessions past ``max_sessions`` before starting an upstream (issue 49, item 1)."""

import asyncio
from typing import Any

import pytest

from harness.proxy import http as front


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
