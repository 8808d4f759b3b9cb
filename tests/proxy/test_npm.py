"""Interop with Node: the MCP Inspector CLI as a client, ``server-everything`` as an upstream.

Both are pinned in ``package.json`` beside this file and installed into ``.cache/proxy`` on first
use (skipped, saying why, without npm). The Inspector's CLI (``mcp-inspector --cli``) prints a
tool result as JSON on stdout and exits 5 for an isError result; a JSON-RPC error is a JSON line
on stderr and exit 1. ``server-everything`` (the TypeScript SDK's reference server) answers a
mistyped argument with a real isError naming it: ``... expected string, received number at message``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import psutil
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.proxy.conftest import PEERS, REPO, LiveProxy, node_env, proxy, start_http

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]


def inspector(npm_bin: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(npm_bin / "mcp-inspector"), "--cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=node_env(npm_bin),
    )


def everything(npm_bin: Path) -> tuple[str, ...]:
    return (str(npm_bin / "mcp-server-everything"), "stdio")


def last_json(text: str) -> Any:
    lines = [x for x in text.splitlines() if x.startswith("{")]
    return json.loads(lines[-1])


WEATHER = ("--method", "tools/call", "--tool-name", "weather", "--tool-arg", "city=Atlantis", "--")


def test_the_inspector_cli_sees_a_masked_failure(npm_bin: Path) -> None:
    done = inspector(npm_bin, *WEATHER, *proxy("--strategy", "masked"))
    assert done.returncode == 5, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == "Error executing tool weather"


def test_the_inspector_cli_sees_a_collapsed_failure_as_an_error_with_the_reason(npm_bin: Path) -> None:
    done = inspector(npm_bin, *WEATHER, *proxy("--strategy", "collapse"))
    assert done.returncode == 1
    assert last_json(done.stderr)["error"]["message"] == "ERROR: no station near Atlantis"


def test_the_inspector_cli_over_the_http_front(npm_bin: Path, live: list[LiveProxy], tmp_path: Path) -> None:
    faults = tmp_path / "f.toml"
    faults.write_text('[[faults]]\nkind = "permanent"\ntool = "add"\ncalls = [1]\n')
    front = start_http(proxy("--http", "--port", "0", "--faults", str(faults)))
    live.append(front)
    listed = inspector(npm_bin, front.url, "--transport", "http", "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == ["add", "weather", "delete_db"]
    called = inspector(
        npm_bin, front.url, "--transport", "http", "--method", "tools/call", "--tool-name", "add",
        "--tool-arg", "x=1", "--tool-arg", "y=2",
    )  # fmt: skip
    assert called.returncode == 5
    assert "permanently unavailable" in json.loads(called.stdout)["content"][0]["text"]


def test_the_inspector_cli_drives_server_everything_through_the_proxy(npm_bin: Path) -> None:
    done = inspector(
        npm_bin, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi", "--",
        *proxy("--strategy", "collapse", upstream=everything(npm_bin)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == "Echo: hi"


def _sdk_session(params: StdioServerParameters, **client: Any) -> dict[str, Any]:
    got: dict[str, Any] = {}

    async def session() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=60, **client) as c:
            got["tools"] = [t.name for t in (await c.list_tools()).tools]
            try:
                got["echo"] = await c.call_tool("echo", {"message": 12345})
            except MCPError as exc:
                got["echo"] = exc

    anyio.run(session)
    return got


def _params(*argv: str) -> StdioServerParameters:
    return StdioServerParameters(command=argv[0], args=list(argv[1:]), cwd=str(REPO))


def test_a_real_is_error_from_server_everything_collapses(npm_bin: Path) -> None:
    got = _sdk_session(_params(*proxy("--strategy", "collapse", upstream=everything(npm_bin))))
    assert "echo" in got["tools"]
    assert isinstance(got["echo"], MCPError) and got["echo"].code == -32603
    assert "expected string, received number at message" in got["echo"].error.message


def test_input_required_asks_for_the_argument_server_everything_rejected(npm_bin: Path) -> None:
    asked: list[Any] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"message": "hello"})

    argv = proxy("--strategy", "input_required", upstream=everything(npm_bin))
    got = _sdk_session(_params(*argv), elicitation_callback=answer)
    assert len(asked) == 1 and "received number at message" in asked[0].message
    assert got["echo"].content[0].text == "Echo: hello"


def test_faults_naming_what_server_everything_lacks_warn_with_its_tools(
    npm_bin: Path, tmp_path: Path
) -> None:
    faults = tmp_path / "f.toml"
    faults.write_text('[[faults]]\nkind = "transient"\ntool = "ecco"\nrate = 1.0\n')
    done = inspector(
        npm_bin, "--method", "tools/list", "--", *proxy("--faults", str(faults), upstream=everything(npm_bin))
    )
    assert done.returncode == 0, done.stderr
    (warning,) = [x for x in done.stderr.splitlines() if x.startswith("harness proxy: warning:")]
    assert "'ecco' is not a tool of this server (its tools: echo, " in warning


def test_the_inspector_cli_closes_the_proxy_cleanly_and_no_server_is_left(
    npm_bin: Path, tmp_path: Path
) -> None:
    # The Inspector ends its stdio server with SIGTERM: the proxy answered "harness: aborted"
    # (exit 130, no summary) and left a server slow to exit running with parent 1.
    pids = tmp_path / "pids"
    slow = (
        sys.executable,
        str(PEERS / "slow_exit_server.py"),
        "--linger",
        "30",
        "--term",
        "30",
        "--pids",
        str(pids),
    )
    done = inspector(npm_bin, "--method", "tools/list", "--", *proxy(upstream=slow))
    assert done.returncode == 0, done.stderr
    assert [t["name"] for t in json.loads(done.stdout)["tools"]] == ["add", "hang"]
    assert "harness: aborted" not in done.stderr
    assert "harness proxy: summary: " in done.stderr
    deadline = time.monotonic() + 10
    server = [int(x) for x in pids.read_text().split()]
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in server):
        assert time.monotonic() < deadline, "the server outlived the proxy"
        time.sleep(0.1)
