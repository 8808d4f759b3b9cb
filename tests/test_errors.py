"""A user's broken file or query is one line naming it, never a traceback (issue 49, item 9).

The readers of TOML and JSON refuse a document nested past what can be read, and a number no
float holds, as the parse errors their callers already name; a results manifest whose keys hold
the wrong types is refused when the directory is opened, naming the file and the key.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.batch.results import ResultsDir
from harness.cli.main import main
from harness.errors import NESTED_TOO_DEEPLY, UserError, loads_json, loads_toml
from harness.view.run import RunView
from tests.helpers.cli import cli
from tests.helpers.paths import REPO_ROOT

SCENARIOS = REPO_ROOT / "scenarios"

DEEP = 5_000


@pytest.mark.parametrize(
    ("text", "says"),
    [("[" * 100_000 + "]" * 100_000, NESTED_TOO_DEEPLY), ('{"a": 1e999}', "out of range"),
     ('{"a": -1e999}', "out of range"), ('[["seed", "=", 2e400]]', "out of range")],
    ids=["nested", "inf", "-inf", "filter"],
)  # fmt: skip
def test_json_that_cannot_be_read_faithfully_is_a_value_error(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        loads_json(text)


def test_json_as_it_is_reads_as_json_does() -> None:
    text = '{"a": [1, 2.5, -0.0, 1e308], "b": {"c": null}, "d": "x"}'
    assert loads_json(text) == json.loads(text)
    # what json.dumps itself writes for a float that is not finite stays readable
    assert math.isnan(loads_json(json.dumps({"x": math.nan}))["x"])
    assert loads_json(json.dumps([math.inf])) == [math.inf]


def test_toml_nested_too_deeply_is_a_toml_error() -> None:
    with pytest.raises(tomllib.TOMLDecodeError, match="nested too deeply"):
        loads_toml("x = " + "[" * DEEP + "]" * DEEP)
    assert loads_toml("x = [[1], [2]]") == {"x": [[1], [2]]}


def _one_line(err: str, *says: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), err
    assert all(s in lines[0] for s in says), err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["run", "{f}", "--seeds", "1"], ["check", "{f}"], ["session", "{f}"],
                                  ["proxy", "--faults", "{f}", "--", "true"]],
                         ids=["run", "check", "session", "proxy"])  # fmt: skip
def test_a_scenario_or_faults_file_nested_too_deeply_is_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "deep.toml"
    f.write_text("x = " + "[" * DEEP + "]" * DEEP + "\n")
    code, out, err = cli([a.replace("{f}", str(f)) for a in argv], capsys)
    if argv[0] == "check":  # check lints each file it is given: a broken one is its FAIL line, exit 2
        lines = [ln for ln in (out + err).splitlines() if ln.strip()]
        assert code == 2 and len(lines) == 1 and "deep.toml: toml: nested too deeply" in lines[0]
        assert "Traceback" not in err
        return
    assert code == 2
    _one_line(err, "deep.toml: toml: nested too deeply")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("manifest") / "run"
    assert main(["run", "flaky_weather", "--seeds", "2", "--agents", "reader", "--strategies",
                 "is_error,collapse", "--out", str(out), "--no-compare"]) == 0  # fmt: skip
    return out


def _drop_grid(m: dict[str, Any]) -> None:
    del m["grid"]


BROKEN: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "no grid": (_drop_grid, "grid: missing"),
    "sources a list": (
        lambda m: m.update(scenario_sources=[["a", "b"]]),
        "scenario_sources: an object expected",
    ),
    "a source a number": (lambda m: m.update(scenario_sources={"a": 3}), "scenario_sources: 'a': a string"),
    "grid a list": (lambda m: m.update(grid=[]), "grid: an object expected, not list"),
    "grid without seeds": (lambda m: m["grid"].pop("seeds"), "grid: unreadable"),
    "status a number": (lambda m: m.update(status=3), "status: a string expected"),
    "sessions true": (lambda m: m.update(sessions=True), "sessions: an integer expected, not bool"),
    "nested": (lambda m: m.update(x=json.loads("[" * 900 + "]" * 900)), "unreadable manifest"),
}


@pytest.mark.timeout(120)  # view serves until stopped were the manifest read as sound
@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("command", ["compare", "resume", "effects", "view"])
def test_a_broken_manifest_is_one_line_for_every_reader(
    case: str, command: str, finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished, run, ignore=shutil.ignore_patterns("writer.lock"))
    manifest = json.loads((run / "manifest.json").read_text())
    change, says = BROKEN[case]
    change(manifest)
    text = json.dumps(manifest)
    if case == "nested":  # deeper than json.dumps writes: by hand
        text = text[:-1] + ', "y": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (run / "manifest.json").write_text(text)
    argv = {"compare": ["compare", str(run)], "resume": ["run", "--resume", "--out", str(run)],
            "effects": ["effects", str(run)],
            "view": ["view", str(run), "--no-open", "--port", "0"]}[command]  # fmt: skip
    code, _, err = cli(argv, capsys)
    assert code == 2
    _one_line(err, "manifest.json", says)
    with pytest.raises(UserError, match=says):
        ResultsDir.open(run)


def test_a_manifest_that_says_exploded_is_not_read_as_finished(finished: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished, run, ignore=shutil.ignore_patterns("writer.lock"))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "exploded"
    (run / "manifest.json").write_text(json.dumps(manifest))
    state = ResultsDir.open(run).state()
    assert state.complete is False and "exploded" in state.warning(run)


def _flip(path: Path, at: float) -> None:
    data = bytearray(path.read_bytes())
    i = int(len(data) * at)
    data[i] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("at", [0.3, 0.5, 0.7])
def test_a_flipped_bit_in_a_finished_run_is_refused_by_every_reader(
    at: float, finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run records its table's sha256 when it finishes; any byte changed after is one line
    (issue 49, item 6), whether or not the file still reads as parquet."""
    run = tmp_path / "run"
    shutil.copytree(finished, run, ignore=shutil.ignore_patterns("writer.lock"))
    assert len(json.loads((run / "manifest.json").read_text())["sessions_sha256"]) == 64
    assert cli(["compare", str(run)], capsys)[0] == 0
    _flip(run / "sessions.parquet", at)
    for argv in (["compare", str(run)], ["effects", str(run)], ["compare", str(run / "sessions.parquet")]):
        code, _, err = cli(argv, capsys)
        assert code == 2, err
        _one_line(err, "sessions.parquet: its bytes are not the ones the run wrote")
    with pytest.raises(UserError, match="sha256 differs"):
        RunView(run)


@pytest.mark.parametrize("at", [0.3, 0.5, 0.7])
def test_a_flipped_bit_in_a_chunk_of_an_unfinished_run_is_refused(
    at: float, finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A chunk's name carries its digest, written with it in one rename: a chunk changed after
    (before the run finished) is one line from compare and from --resume, naming the chunk."""
    from harness.batch.grid import Grid

    manifest = json.loads((finished / "manifest.json").read_text())
    rows = ResultsDir.open(finished).read_rows().to_dict("records")
    unfinished = ResultsDir.create(tmp_path / "run", {"grid": Grid.from_json(manifest["grid"]).to_json(),
                                                       "row_version": manifest["row_version"]})  # fmt: skip
    chunk = unfinished.write_chunk(rows[:2])
    unfinished.release()
    assert len(ResultsDir.open(tmp_path / "run").read_rows()) == 2  # sound: read as it was written
    _flip(chunk, at)
    for argv in (["compare", str(tmp_path / "run")], ["run", "--resume", "--out", str(tmp_path / "run")]):
        code, _, err = cli(argv, capsys)
        assert code == 2, err
        said = "\n".join(ln for ln in err.splitlines() if not ln.startswith("harness run: resuming"))
        _one_line(said, chunk.name, "its bytes are not the ones the run wrote")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
"""Any value a JSON document can hold (NaN and the infinities too: ``json.dumps`` writes them)."""


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document (a key of an object, an index of a list), parents first."""
    found: list[tuple[Any, ...]] = [at] if at else []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        found += _paths(value, (*at, key))
    return found


def _mutate(doc: Any, data: st.DataObject) -> Any:
    """``doc`` with one place deleted, or its value replaced by any JSON value."""
    doc = json.loads(json.dumps(doc))
    paths = _paths(doc)
    path = data.draw(st.sampled_from(paths), label="place")
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if data.draw(st.booleans(), label="delete"):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(JSON_VALUES, label="value")
    return doc


def _refused_in_one_line_or_accepted(code: int, err: str) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("harness: warning")]
        assert len(lines) == 1 and lines[0].startswith("harness: error: "), err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_change_to_a_manifest_is_read_or_refused_in_one_line(
    data: st.DataObject, finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 49: whatever a manifest is changed into, compare reads it or says in one line why
    not (exit 2), never a traceback."""
    manifest = json.loads((finished / "manifest.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        shutil.copytree(finished, run, ignore=shutil.ignore_patterns("writer.lock"))
        (run / "manifest.json").write_text(json.dumps(_mutate(manifest, data)))
        code, _, err = cli(["compare", str(run)], capsys)
    _refused_in_one_line_or_accepted(code, err)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_change_to_a_scenario_is_run_or_refused_in_one_line(
    data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 49: whatever a scenario file is changed into (within what TOML can write), run
    runs it or says in one line why not (exit 2), never a traceback."""
    scenario = tomllib.loads((SCENARIOS / "flaky_weather.toml").read_text())
    changed = _mutate(scenario, data)
    try:
        text = tomli_w.dumps(changed)
    except (TypeError, ValueError):  # None, or a list TOML cannot hold: not a file anyone can write
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "changed.toml"
        path.write_text(text)
        argv = ["run", str(path), "--seeds", "1", "--agents", "reader", "--strategies", "is_error",
                "--executor", "serial", "--out", str(Path(tmp) / "out"), "--no-compare"]  # fmt: skip
        code, _, err = cli(argv, capsys)
    _refused_in_one_line_or_accepted(code, err)


def test_an_error_quoting_a_name_with_a_line_break_is_still_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "odd.toml"
    f.write_text((SCENARIOS / "flaky_weather.toml").read_text() + '\n"odd\\nkey\\u2028" = 1\n')
    code, _, err = cli(["run", str(f), "--seeds", "1"], capsys)
    assert code == 2
    _one_line(err, "odd.toml", "odd\\x0akey\\u2028")
