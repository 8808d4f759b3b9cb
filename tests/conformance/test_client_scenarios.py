"""``harness client --conformance``: the suite's client scenarios, and the ones out of scope.

The suite runs ``conformance client --command "CMD" --scenario S``: it starts a
test server of its own and runs ``CMD URL`` with ``MCP_CONFORMANCE_SCENARIO=S``.
The four non-OAuth client scenarios must pass with ``harness client
--conformance`` as CMD. The OAuth scenarios (:data:`OUT_OF_SCOPE`) are out of
scope, for :data:`OAUTH_REASON`: the command refuses them with one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.fixtures.conformance import CLIENT_SCENARIOS, OAUTH_REASON, SCENARIO_ENV, apply_defaults

CLIENT_COMMAND = f"{sys.executable} -m harness.cli.main client --conformance"

IN_SCOPE = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")

OUT_OF_SCOPE = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
)
"""The suite's 22 OAuth client scenarios (0.1.16): out of scope, because the harness client
has no authorization support at all (no metadata discovery, registration or token exchange)."""


def invoke(scenario: str | None, url: str = "http://127.0.0.1:9/mcp") -> tuple[int, str]:
    env = {SCENARIO_ENV: scenario} if scenario is not None else {}
    runner = CliRunner(env=env)
    result = runner.invoke(cli, ["client", "--conformance", url])
    return result.exit_code, result.output


class TestScenarioNames:
    def test_the_table_holds_exactly_the_four_in_scope_scenarios(self) -> None:
        assert set(CLIENT_SCENARIOS) == set(IN_SCOPE)

    @pytest.mark.parametrize("scenario", OUT_OF_SCOPE)
    def test_an_oauth_scenario_is_refused_in_one_line_with_the_reason(self, scenario: str) -> None:
        code, output = invoke(scenario)
        assert code == 2
        assert output == f"harness: error: client scenario {scenario!r}: {OAUTH_REASON}\n"

    def test_an_unknown_scenario_names_the_nearest_ones(self) -> None:
        code, output = invoke("tools-call")
        assert code == 2
        assert output.startswith(
            "harness: error: unknown client scenario 'tools-call'; did you mean 'tools_call'?"
        )
        assert output.count("\n") == 1

    def test_no_scenario_in_the_environment_is_a_one_line_error(self) -> None:
        code, output = invoke(None)
        assert (code, output) == (
            2,
            f"harness: error: --conformance needs the scenario's name in {SCENARIO_ENV}\n",
        )

    def test_a_server_that_is_not_there_fails_with_exit_1_and_one_line(self) -> None:
        code, output = invoke("initialize", "http://127.0.0.1:9/mcp")
        assert code == 1
        assert output.startswith("harness: error: HTTP initialize:")
        assert output.count("\n") == 1

    def test_a_url_that_is_not_http_is_a_usage_error(self) -> None:
        code, output = invoke("initialize", "ftp://x")
        assert code == 2
        assert "URL must start with http:// or https://" in output


class TestDefaults:
    @pytest.mark.parametrize(
        ("properties", "content"),
        [
            (
                {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                    "verified": {"type": "boolean", "default": True},
                },
                {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True},
            ),
            ({"free": {"type": "string"}}, {}),
            ({}, {}),
        ],
    )
    def test_an_elicitation_is_accepted_with_every_default_filled_in(
        self, properties: dict[str, object], content: dict[str, object]
    ) -> None:
        params = {"message": "?", "requestedSchema": {"type": "object", "properties": properties}}
        assert apply_defaults("elicitation/create", params) == {"action": "accept", "content": content}


@pytest.mark.conformance
@pytest.mark.slow
@pytest.mark.parametrize("scenario", IN_SCOPE)
def test_the_suite_s_client_scenario_passes_with_harness_client(
    suite_bin: Path, scenario: str, tmp_path: Path
) -> None:
    env = {**os.environ, "PATH": f"{suite_bin}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    done = subprocess.run(
        [str(suite_bin / "conformance"), "client", "--command", CLIENT_COMMAND, "--scenario", scenario],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"client scenario {scenario} failed (exit {done.returncode}):\n{out[-3000:]}"
    assert "OVERALL: PASSED" in out
    assert "0 failed, 0 warnings" in out
