"""`harness generate` and `harness run --family`: the same scenarios, as files or as data."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.helpers.cli import cli

KEY = ["scenario", "agent", "strategy", "host", "seed"]


def rows(path: Path) -> pd.DataFrame:
    df = pd.read_parquet(path / "sessions.parquet").drop(columns=["wall_time_s"])
    return df.sort_values(KEY).reset_index(drop=True)


def test_generate_writes_byte_identical_files_and_another_seed_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for out, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        rc, _, err = cli(
            ["generate", "mixed", "--count", "4", "--seed", seed, "--out", str(tmp_path / out)], capsys
        )
        assert rc == 0, err
    a, b, c = (sorted((tmp_path / d).glob("*.toml")) for d in "abc")
    assert [p.name for p in a] == [f"mixed-5-{i:04d}.toml" for i in range(4)]
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    assert [p.read_bytes().split(b"\n", 1)[1] for p in a] != [p.read_bytes().split(b"\n", 1)[1] for p in c]


def test_a_family_run_and_its_generated_files_give_identical_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = ["--agents", "naive,reader", "--strategies", "is_error,collapse", "--seeds", "2", "--no-compare"]
    rc, _, err = cli(["run", "--family", "mixed", "--count", "3", "--family-seed", "1", *small,
                      "--executor", "serial", "--out", str(tmp_path / "family")], capsys)  # fmt: skip
    assert rc == 0, err
    rc, _, err = cli(
        ["generate", "mixed", "--count", "3", "--seed", "1", "--out", str(tmp_path / "gen")], capsys
    )
    assert rc == 0, err
    files = [str(p) for p in sorted((tmp_path / "gen").glob("*.toml"))]
    rc, _, err = cli(["run", *files, *small, "--executor", "process", "--workers", "2",
                      "--out", str(tmp_path / "files")], capsys)  # fmt: skip
    assert rc == 0, err
    family, generated = rows(tmp_path / "family"), rows(tmp_path / "files")
    assert len(family) == 3 * 2 * 2 * 2 and set(family.scenario) == {f"mixed-1-{i:04d}" for i in range(3)}
    pd.testing.assert_frame_equal(family, generated)
    # The manifest says where each sampled scenario came from, so a resume draws the same ones.
    sources = json.loads((tmp_path / "family" / "manifest.json").read_text())["scenario_sources"]
    assert all(s.startswith("family:") for s in sources.values()) and len(sources) == 3


def test_a_family_run_resumes_with_its_sampled_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.batch.runner as runner

    out = tmp_path / "run"
    args = ["run", "--family", "reads-with-transient-faults", "--count", "2", "--agents", "reader",
            "--strategies", "is_error", "--seeds", "30", "--executor", "serial", "--no-compare"]  # fmt: skip

    def stop_after_first_task(total: int, done: int) -> Callable[[int], None]:
        def advance(n: int) -> None:
            raise KeyboardInterrupt

        return advance

    original = runner.run_batch

    def interrupted(*a: Any, **k: Any) -> Any:
        return original(*a, **{**k, "progress": stop_after_first_task})

    monkeypatch.setattr(runner, "run_batch", interrupted)
    rc, _, _ = cli([*args, "--out", str(out)], capsys)
    assert rc == 130
    monkeypatch.undo()
    rc, _, err = cli(["run", "--resume", "--out", str(out), "--no-compare"], capsys)
    assert rc == 0, err
    rc, _, err = cli([*args, "--out", str(tmp_path / "whole")], capsys)
    assert rc == 0, err
    pd.testing.assert_frame_equal(rows(out), rows(tmp_path / "whole"))


def test_generate_names_a_broken_family_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'description = "x"\n[task]\nreads = ["weather"]\n[faults]\nkinds = ["transient"]\nrate = 2\n'
    )
    rc, _, err = cli(["generate", str(bad), "--out", str(tmp_path / "out")], capsys)
    assert rc == 2
    assert (
        err.startswith("harness: error: ") and "bad.toml: faults.rate: " in err and "between 0 and 1" in err
    )


def test_generate_and_run_refuse_an_unknown_family(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = cli(["generate", "mixd", "--out", str(tmp_path)], capsys)
    assert rc == 2 and "unknown family 'mixd'" in err
    rc, _, err = cli(["run", "--family", "mixd", "--out", str(tmp_path / "r")], capsys)
    assert rc == 2 and "unknown family 'mixd'" in err and "sessions ->" not in err


def test_the_study_preset_samples_every_shipped_family_and_says_it_takes_a_while(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.scenarios.family import list_families

    small = ["--agents", "naive", "--strategies", "is_error", "--executor", "serial", "--no-compare"]
    rc, _, err = cli(
        ["run", "--study", "--count", "1", "--seeds", "1", *small, "--out", str(tmp_path / "s")], capsys
    )
    assert rc == 0, err
    assert "this may take a few minutes" in err and "harness run: 5/5 sessions" in err  # progress lines
    done = rows(tmp_path / "s")
    assert sorted(done.scenario) == sorted(f"{f}-0-0000" for f in list_families())
    rc, _, err = cli(["run", "--study", "flaky_weather", "--out", str(tmp_path / "t")], capsys)
    assert rc == 2 and "--study is a preset of its own" in err


def test_the_study_preset_reaches_200_scenarios() -> None:
    from harness.cli.run import STUDY_SCENARIOS, STUDY_SEEDS
    from harness.scenarios.family import list_families

    per_family = -(-STUDY_SCENARIOS // len(list_families()))
    assert STUDY_SCENARIOS >= 200 and per_family * len(list_families()) >= 200 and STUDY_SEEDS == 5
