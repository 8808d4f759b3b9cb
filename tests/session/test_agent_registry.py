"""Users' own agents: by module path, by file path and by entry point, under every executor.

Each run goes through the installed ``harness`` command in a fresh directory, as a user
would type it, with no PYTHONPATH pointing at the user's code: a ``module:Class`` is found
in the working directory, a ``file.py:Class`` by its path, and an entry point through the
``harness.agents`` group of an installed distribution (here a ``.dist-info`` folder on
PYTHONPATH, which is all an install leaves behind).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.errors import UserError
from harness.session import registry
from harness.session.agent import Agent
from harness.session.registry import agent_class, list_agents, make_agent
from harness.session.simulated import run_session

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "stubborn.py"
HARNESS = shutil.which("harness") or "harness"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    return {**env, **extra}


def _harness(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [HARNESS, *args], cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    """A user's working directory: a package ``mypkg`` and a loose file, both the example agent."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    shutil.copy(EXAMPLE, tmp_path / "mypkg" / "agents.py")
    shutil.copy(EXAMPLE, tmp_path / "stubborn.py")
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["serial", "process", "dask"])
def test_a_user_agent_runs_by_module_path_and_by_file_path_under_every_executor(
    user_dir: Path, executor: str
) -> None:
    specs = ["mypkg.agents:Stubborn", "./stubborn.py:Stubborn"]
    args = "run flaky_weather --seeds 2 --strategies is_error,collapse --workers 2 --out out --traces"
    done = _harness(
        [*args.split(), "--no-compare", "--agents", ",".join(specs), "--executor", executor], user_dir
    )
    assert done.returncode == 0, done.stderr
    rows = pd.read_parquet(user_dir / "out" / "sessions.parquet")
    assert sorted(rows["agent"].unique()) == sorted(specs)  # the agent column records the spec
    assert (rows["status"] == "ok").all(), rows[["agent", "status", "error"]]
    # A spec's slash and colon do not reach the trace's file name.
    assert len(list((user_dir / "out" / "traces").glob("flaky_weather__*.jsonl"))) == len(rows)


@pytest.mark.slow
def test_a_user_agent_registered_as_an_entry_point_is_listed_and_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(EXAMPLE, site / "user_agents.py")
    info = site / "user_agents-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: user-agents\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[harness.agents]\nstubborn = user_agents:Stubborn\n")
    work = tmp_path / "work"
    work.mkdir()
    listed = _harness(["list", "--json"], work, PYTHONPATH=str(site))
    assert listed.returncode == 0, listed.stderr
    assert '"stubborn"' in listed.stdout
    args = "run flaky_weather --agents stubborn --seeds 2 --executor process --out out --no-compare"
    done = _harness(args.split(), work, PYTHONPATH=str(site))
    assert done.returncode == 0, done.stderr
    rows = pd.read_parquet(work / "out" / "sessions.parquet")
    assert set(rows["agent"]) == {"stubborn"} and (rows["status"] != "harness_error").all()


BROKEN = {
    "unknown name": ("nosuchagent", "unknown agent 'nosuchagent'"),
    "no module": ("nosuch_mod_xyz:Agent", "no module named 'nosuch_mod_xyz'"),
    "no attribute": ("mypkg.agents:Nope", "has no attribute 'Nope'"),
    "not an agent": ("mypkg.agents:ClassVar", "is not a subclass of harness.session.agent.Agent"),
    "no file": ("./missing.py:Stubborn", "no such file ./missing.py"),
    "bad syntax": ("./broken.py:Stubborn", "failed to load: SyntaxError"),
    "bad form": ("mypkg.agents:", "expected NAME, module:Class or path/to/file.py:Class"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_an_agent_that_cannot_be_loaded_is_one_clear_line_and_nothing_runs(user_dir: Path, case: str) -> None:
    spec, message = BROKEN[case]
    (user_dir / "broken.py").write_text("def (:\n")
    done = _harness(["run", "flaky_weather", "--agents", spec, "--seeds", "1", "--out", "out"], user_dir)
    assert done.returncode == 2
    assert done.stderr.startswith("harness: error: ") and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (user_dir / "out").exists()


def test_an_abstract_agent_is_refused_naming_what_it_lacks(tmp_path: Path) -> None:
    (tmp_path / "half.py").write_text(
        "from harness.session.agent import Agent\n"
        "class Half(Agent):\n"
        "    def reset(self, task, tools, seed): pass\n"
    )
    with pytest.raises(UserError, match="does not implement act"):
        agent_class(f"{tmp_path / 'half.py'}:Half")


def test_the_shipped_agents_are_found_through_the_entry_point_group() -> None:
    assert {"blind", "naive", "oracle", "reader", "refresher", "retry"} <= set(list_agents())
    for name in ("blind", "naive", "oracle", "reader", "refresher", "retry"):
        cls = agent_class(name)
        assert issubclass(cls, Agent) and cls.name == name


def test_a_file_agent_in_process_gives_the_spec_as_its_row_name_and_is_deterministic(tmp_path: Path) -> None:
    spec = f"{EXAMPLE}:Stubborn"
    first = run_session("flaky_weather", spec, "is_error", 3).to_row()
    second = run_session("flaky_weather", make_agent(spec), "is_error", 3).to_row()
    assert first["agent"] == spec and second["agent"] == "stubborn"  # an instance names itself
    again = run_session("flaky_weather", spec, "is_error", 3).to_row()
    assert first["trace_hash"] == again["trace_hash"]


def test_a_module_agent_is_found_in_the_working_directory(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(user_dir)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(user_dir))])
    registry.agent_class.cache_clear()
    try:
        assert agent_class("mypkg.agents:Stubborn").__name__ == "Stubborn"
    finally:
        registry.agent_class.cache_clear()
        sys.modules.pop("mypkg.agents", None)
        sys.modules.pop("mypkg", None)


@pytest.mark.slow
def test_an_agent_a_worker_cannot_import_is_reported_with_its_reason(user_dir: Path) -> None:
    # The parent loads the file (so the run starts); a worker process cannot.
    body = EXAMPLE.read_text().replace("from __future__ import annotations\n", "")
    guard = (
        "import multiprocessing\n"
        "if multiprocessing.current_process().name != 'MainProcess':\n"
        "    raise ImportError('only the parent has this dependency')\n"
    )
    (user_dir / "parent_only.py").write_text(guard + body)
    args = "run flaky_weather --seeds 2 --strategies is_error --executor process --out out --no-compare"
    done = _harness([*args.split(), "--agents", "./parent_only.py:Stubborn"], user_dir)
    assert done.returncode == 3, done.stderr  # every session broke: the run says so in its exit
    assert "first harness error" in done.stderr and "ImportError: only the parent" in done.stderr
    rows = pd.read_parquet(user_dir / "out" / "sessions.parquet")
    assert (rows["status"] == "harness_error").all()
    assert rows["error"].str.contains("failed to load: ImportError: only the parent").all()
    assert "worker process died" not in (user_dir / "out" / "errors.log").read_text()


# -- where a file lies does not seed it --------------------------------------------------------

SEED_RECORDER = """
from harness.session.agent import Agent, Finish

SEEDS = []


class Recorder(Agent):
    name = "recorder"

    def reset(self, task, tools, seed):
        SEEDS.append(seed)

    def act(self, observation):
        return Finish()
"""


@pytest.mark.parametrize(
    ("spec", "seeded_as"),
    [
        ("reader", "reader"),
        ("mypkg.agents:Stubborn", "mypkg.agents:Stubborn"),
        ("stubborn.py:Stubborn", "stubborn.py:Stubborn"),
        ("./stubborn.py:Stubborn", "stubborn.py:Stubborn"),
        ("/home/someone/agents/stubborn.py:Stubborn", "stubborn.py:Stubborn"),
        ("agents/v2/stubborn.py:Stubborn", "stubborn.py:Stubborn"),
    ],
)
def test_an_agent_is_seeded_by_its_spec_without_the_folder_of_its_file(spec: str, seeded_as: str) -> None:
    assert registry.seed_name(spec) == seeded_as


def test_the_same_agent_file_in_two_folders_gets_the_same_seed(tmp_path: Path) -> None:
    # Before, the seed was drawn from the spec with its folder: a clone elsewhere (CI's, say)
    # drew other numbers and ran another session from the same inputs.
    seeds = []
    for folder in ("a", "b/c"):
        (tmp_path / folder).mkdir(parents=True)
        path = tmp_path / folder / "recorder.py"
        path.write_text(SEED_RECORDER)
        spec = f"{path}:Recorder"
        run_session("flaky_weather", spec, "is_error", 3)
        seeds.append(agent_class(spec).__module__)
        module = sys.modules[agent_class(spec).__module__]
        seeds.append(module.SEEDS[-1])
    assert seeds[1] == seeds[3] and seeds[0] != seeds[2]  # two modules, one seed
