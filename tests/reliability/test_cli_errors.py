"""Every user mistake on the command line: exit status 2, one clear error line, no traceback.

Table-driven: each row is a bad invocation of the real CLI, run in a subprocess
(all rows at once, a few in parallel), and the text its error line must hold.
Unknown scenario, agent, strategy, host and command names must name the nearest
valid ones. A row whose command module is not there is skipped, not passed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.cli.main import COMMANDS

HARNESS = [sys.executable, "-m", "harness.cli.main"]

ROWS: list[tuple[str, list[str], str]] = [
    # (id, argv, what the one error line must contain); {…} are filled from the fixtures below
    ("top: unknown command", ["sesion"], "did you mean 'session'?"),
    ("top: unknown option", ["--bogus"], "No such option '--bogus'"),
    ("serve: nothing to serve", ["serve"], "say what to serve: --demo or --conformance"),
    ("serve: strategy typo", ["serve", "--demo", "--strategy", "is_eror"], "did you mean 'is_error'?"),
    ("serve: negative timeout", ["serve", "--demo", "--call-timeout", "-1"], "'--call-timeout'"),
    ("serve: tiny message limit", ["serve", "--demo", "--max-message-bytes", "1"], "'--max-message-bytes'"),
    ("serve: port out of range", ["serve", "--demo", "--port", "70000"], "'--port'"),
    ("list: unknown option", ["list", "--bogus"], "No such option '--bogus'"),
    ("session: no scenario", ["session"], "Missing argument 'SCENARIO'"),
    ("session: scenario typo", ["session", "flaky_wether"], "did you mean 'flaky_weather'"),
    ("session: agent typo", ["session", "flaky_weather", "--agent", "retyr"], "did you mean 'retry'"),
    (
        "session: strategy typo",
        ["session", "flaky_weather", "--strategy", "is_eror"],
        "did you mean 'is_error'?",
    ),
    ("session: host typo", ["session", "flaky_weather", "--host", "typcal"], "did you mean 'typical'?"),
    ("session: negative seed", ["session", "flaky_weather", "--seed", "-1"], "'--seed'"),
    ("session: missing file", ["session", "{missing}/x.toml"], "no such scenario file"),
    ("session: broken TOML", ["session", "{broken_toml}"], "toml"),
    ("session: unwritable trace", ["session", "flaky_weather", "--trace", "/dev/null/x"], "/dev/null/x"),
    ("run: scenario typo", ["run", "flaky_wether", "--seeds", "1"], "did you mean 'flaky_weather'"),
    ("run: agent typo", ["run", "--agents", "retyr", "--seeds", "1"], "did you mean 'retry'"),
    ("run: strategy typo", ["run", "--strategies", "is_eror", "--seeds", "1"], "did you mean 'is_error'?"),
    ("run: host typo", ["run", "--hosts", "typcal", "--seeds", "1"], "did you mean 'typical'?"),
    ("run: zero seeds", ["run", "--seeds", "0"], "--seeds must be at least 1"),
    ("run: an empty scenario name", ["run", "", "--seeds", "1"], "SCENARIOS: '' names nothing"),
    (
        "run: empty --agents",
        ["run", "flaky_weather", "--agents", "", "--seeds", "1"],
        "--agents: '' names nothing",
    ),
    (
        "run: --strategies of commas",
        ["run", "--strategies", ",", "--seeds", "1"],
        "--strategies: ',' names nothing",
    ),
    ("session: llm without a model", ["session", "flaky_weather", "--agent", "llm"], "--agent llm needs"),
    ("run: --set without =", ["run", "--set", "foo"], "expected KEY=V1"),
    (
        "run: unknown override",
        ["run", "flaky_weather", "--set", "faults.rat=0.1", "--seeds", "1"],
        "unknown override",
    ),
    ("run: unknown executor", ["run", "--executor", "nope"], "'--executor'"),
    ("run: family typo", ["run", "--family", "mixd"], "did you mean 'mixed'"),
    ("check: zero seeds", ["check", "flaky_weather", "--seeds", "0"], "'--seeds'"),
    ("check: unknown option", ["check", "--sedes", "2"], "No such option"),
    ("generate: no --out", ["generate", "mixed"], "Missing option '--out'"),
    ("generate: family typo", ["generate", "mixd", "--out", "{missing}/g"], "did you mean 'mixed'"),
    ("generate: zero count", ["generate", "mixed", "--count", "0", "--out", "{missing}/g"], "'--count'"),
    (
        "run: scheduler without dask",
        ["run", "--scheduler", "tcp://127.0.0.1:1"],
        "--scheduler goes with --executor dask",
    ),
    ("run: resume a missing dir", ["run", "--resume", "--out", "{missing}"], "no such results directory"),
    (
        "run: existing run",
        ["run", "flaky_weather", "--seeds", "1", "--out", "{results}"],
        "already holds a run",
    ),
    ("run: broken TOML", ["run", "{broken_toml}", "--seeds", "1"], "toml"),
    ("run: --out is a file", ["run", "flaky_weather", "--seeds", "1", "--out", "{broken_json}"], "a file"),
    (
        "run: --out not empty",
        ["run", "flaky_weather", "--seeds", "1", "--out", "{foreign}"],
        "not an empty directory",
    ),
    (
        "run: --out unwritable",
        ["run", "flaky_weather", "--seeds", "1", "--out", "/dev/null/x"],
        "/dev/null/x",
    ),
    ("run: --resume --seeds", ["run", "--resume", "--out", "{results}", "--seeds", "7"], "--seeds 7"),
    ("compare: missing dir", ["compare", "{missing}"], "no such results directory"),
    ("compare: foreign dir", ["compare", "{foreign}"], "not a harness results directory"),
    ("compare: a file", ["compare", "{broken_json}"], "a file, not a results directory"),
    ("compare: baseline typo", ["compare", "{results}", "--baseline", "is_eror"], "did you mean 'is_error'?"),
    ("compare: column typo", ["compare", "{results}", "--by", "scenari"], "did you mean 'scenario'"),
    ("compare: unknown format", ["compare", "{results}", "--format", "xml"], "'--format'"),
    ("effects: missing dir", ["effects", "{missing}"], "no such results directory"),
    ("effects: a file", ["effects", "{broken_json}"], "a file, not a results directory"),
    ("effects: no such strategy", ["effects", "{results}", "--against", "nope"], "unknown strategy 'nope'"),
    ("client: no URL", ["client"], "Missing argument 'URL'"),
    ("worlds: no such view", ["worlds", "nope"], "'nope' is not one of 'events', 'injections'"),
    ("plot: missing dir", ["plot", "{missing}"], "no such results directory"),
    ("plot: a file", ["plot", "{broken_json}"], "a file, not a results directory"),
    ("plot: unwritable out", ["plot", "{results}", "--out", "/dev/null/x"], "cannot create the directory"),
    ("bench: missing JSON", ["bench", "--from-json", "{missing}/b.json"], "no such file"),
    ("bench: broken JSON", ["bench", "--from-json", "{broken_json}"], "cannot read benchmark JSON"),
    ("bench: unknown format", ["bench", "--format", "nope"], "'--format'"),
    ("probe: no command", ["probe"], "say which server to probe"),
    ("probe: missing binary", ["probe", "--", "/no/such/binary"], "command not found: /no/such/binary"),
    ("probe: --tool without --args", ["probe", "--tool", "add", "--", "true"], "give one --args per --tool"),
    ("probe: --args not JSON", ["probe", "--tool", "add", "--args", "{", "--", "true"], "is not JSON"),
    ("probe: zero timeout", ["probe", "--timeout", "0", "--", "true"], "--timeout"),
    ("view: missing dir", ["view", "{missing}"], "no such results directory or file"),
    ("view: foreign dir", ["view", "{foreign}", "--no-open"], "not a harness results directory"),
    ("view: broken JSON", ["view", "{broken_json}", "--no-open"], "not JSON"),
    ("view: not a run", ["view", "{broken_toml}", "--no-open"], "give a results directory"),
    ("view: port out of range", ["view", "{results}", "--port", "70000"], "'--port'"),
    ("view: column typo", ["view", "{results}", "--by", "agnet", "--no-open"], "did you mean 'agent'"),
    ("view: html into a directory", ["view", "{results}", "--html", "{foreign}"], "a directory"),
    ("proxy: no server", ["proxy"], "say which server to proxy"),
    ("proxy: missing binary", ["proxy", "--", "/no/such/binary"], "command not found: /no/such/binary"),
    (
        "proxy: command and --upstream",
        ["proxy", "--upstream", "http://127.0.0.1:1/mcp", "--", "true"],
        "not both",
    ),
    ("proxy: --upstream not a URL", ["proxy", "--upstream", "localhost:8000"], "http:// or https:// URL"),
    ("proxy: strategy typo", ["proxy", "--strategy", "is_eror", "--", "true"], "did you mean 'is_error'?"),
    ("proxy: broken faults file", ["proxy", "--faults", "{broken_toml}", "--", "true"], "toml"),
    (
        "proxy: missing faults file",
        ["proxy", "--faults", "{missing}/f.toml", "--", "true"],
        "no such faults file",
    ),
    (
        "proxy: trace on stdout over stdio",
        ["proxy", "--trace", "-", "--", "true"],
        "--trace - writes to stdout",
    ),
    ("proxy: unwritable trace", ["proxy", "--trace", "/dev/null/x", "--", "true"], "/dev/null/x"),
    ("proxy: negative seed", ["proxy", "--seed", "-1", "--", "true"], "'--seed'"),
    ("read: nothing to read", ["read"], "say what to read"),
    ("read: a line that is not JSON", ["read", "--jsonl", "{broken_json}"], "broken.json:1: not JSON"),
    ("read: missing jsonl file", ["read", "--jsonl", "{missing}/x.jsonl"], "no such file"),
    (
        "read: the split once called test",
        ["read", "--evaluate", "--split", "test", "--misses"],
        "is 'dev' now",
    ),
    ("read: unknown split", ["read", "--evaluate", "--split", "nope"], "not a split"),
]

ERROR_PREFIXES = ("harness: error: ",)
"""How an error line starts: one style, for a UserError and a malformed invocation alike
(click's own "Usage: ... Error: ..." block is no longer printed)."""


def written(name: str) -> bool:
    return name not in COMMANDS or importlib.util.find_spec(COMMANDS[name][0]) is not None


def fill(arg: str, places: dict[str, str]) -> str:
    for key, path in places.items():
        arg = arg.replace("{" + key + "}", path)
    return arg


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A finished tiny run, a foreign directory, a missing path, broken TOML and JSON files."""
    root = tmp_path_factory.mktemp("cli-errors")
    results = root / "results"
    subprocess.run(
        [
            *HARNESS,
            "run",
            "flaky_weather",
            "--agents",
            "naive",
            "--strategies",
            "is_error,masked",
            "--seeds",
            "1",
            "--executor",
            "serial",
            "--out",
            str(results),
            "--no-compare",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (root / "foreign").mkdir()
    (root / "foreign" / "notes.txt").write_text("not a run")
    (root / "broken.toml").write_text("[x\n")
    (root / "broken.json").write_text("{")
    return {
        "results": str(results),
        "foreign": str(root / "foreign"),
        "missing": str(root / "missing"),
        "broken_toml": str(root / "broken.toml"),
        "broken_json": str(root / "broken.json"),
    }


@pytest.fixture(scope="module")
def outcomes(places: dict[str, str]) -> Iterator[dict[str, Future[subprocess.CompletedProcess[str]]]]:
    """Every row started at once (four at a time); each test waits for its own."""

    def invoke(argv: list[str]) -> subprocess.CompletedProcess[str]:
        args = [fill(a, places) for a in argv]
        return subprocess.run(
            [*HARNESS, *args],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            cwd=places["foreign"],
        )

    with ThreadPoolExecutor(max_workers=4) as pool:
        yield {row_id: pool.submit(invoke, argv) for row_id, argv, _ in ROWS if written(argv[0])}


@pytest.mark.parametrize(("argv", "says"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_user_mistake_exits_2_with_one_clear_error_line_and_no_traceback(
    request: pytest.FixtureRequest, argv: list[str], says: str
) -> None:
    if not written(argv[0]):
        pytest.skip("command not written yet")
    done = request.getfixturevalue("outcomes")[request.node.callspec.id].result()
    stderr = done.stderr
    assert "Traceback" not in stderr, stderr
    assert done.returncode == 2, f"exit {done.returncode}; stderr: {stderr}"
    errors = [line for line in stderr.splitlines() if line.startswith(ERROR_PREFIXES)]
    assert len(errors) == 1, f"expected one error line, got: {stderr!r}"
    assert says in errors[0], errors[0]
    others = [ln for ln in stderr.splitlines() if ln.strip() and ln not in errors]
    assert all(ln.startswith("harness ") for ln in others), f"unexpected stderr lines: {others}"
    if argv[0] == "run" and "--resume" not in argv:
        assert not others, f"a refused run was announced first: {others}"


def test_the_table_covers_every_registered_command() -> None:
    covered = {argv[0] for _, argv, _ in ROWS}
    assert set(COMMANDS) <= covered, f"no bad-input rows for: {sorted(set(COMMANDS) - covered)}"


def test_the_shipped_scenarios_exist_so_the_typo_rows_test_suggestions() -> None:
    from harness.scenarios.scenario import list_scenarios  # type: ignore[attr-defined,unused-ignore]

    assert "flaky_weather" in list_scenarios()
    assert Path(sys.executable).exists()
