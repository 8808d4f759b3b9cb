"""The compiled-core trial: the session path built with mypyc, against the same tree in pure Python.

``python -m harness.bench.mypyc_trial`` copies this checkout's committed tree (``git archive
HEAD``) into a temporary directory, makes the few edits mypyc needs to build and import it
(:data:`EDITS`: it refuses an attribute narrowed by an assignment and a class attribute read
through ``type(x)``; interpreted agents must be allowed to
subclass the compiled ``Agent``), compiles :data:`MODULES` with ``mypyc`` (about a minute here;
needs a C compiler and the Python headers), and then runs the ``sessions/scripted-20`` workload
(``naive``, ``is_error``, handshake era) in both trees, alternately, printing each tree's best
rate and one sha256 over the 500 sessions' trace hashes. The pure tree has the same edits, so the two differ
only in being compiled. Nothing is kept: docs/benchmarks.md says why.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from io import BytesIO
from pathlib import Path

MODULES: tuple[str, ...] = (
    "harness/protocol/server.py",
    "harness/protocol/client.py",
    "harness/protocol/memory.py",
    "harness/protocol/tools.py",
    "harness/protocol/messages.py",
    "harness/session/simulated.py",
    "harness/session/loop.py",
    "harness/faults/kinds.py",
    "harness/scenarios/outcome.py",
    "harness/sim/catalogue.py",
    "harness/session/trace.py",
    "harness/session/host.py",
    "harness/session/agent.py",
    "scripted_agents/base.py",
)
"""What one scripted session runs through: protocol, session, faults, outcome, host, agent."""

_ALLOW = "@mypyc_attr(allow_interpreted_subclasses=True)\n"
_IMPORT = (
    "from __future__ import annotations\n",
    "from __future__ import annotations\n\nfrom mypy_extensions import mypyc_attr\n",
)
EDITS: dict[str, tuple[tuple[str, str], ...]] = {
    "harness/session/simulated.py": (
        (
            "ran, self.ran_with = self.ran_with, None\n",
            "ran: Any = self.ran_with\n            self.ran_with = None\n",
        ),
        (
            "outcome: CallOutcome | None = self.engine_of().last\n",
            "outcome: CallOutcome | None = getattr(self.engine_of(), 'last')\n",
        ),
    ),
    "harness/session/loop.py": (
        ('f"{cls.__module__}:{cls.__qualname__}"', "f\"{getattr(cls, '__module__')}:{cls.__qualname__}\""),
    ),
    "harness/session/agent.py": (_IMPORT, ("\nclass Agent(ABC):", "\n" + _ALLOW + "class Agent(ABC):")),
    "scripted_agents/base.py": (
        _IMPORT,
        ("\nclass ScriptedAgent(Agent):", "\n" + _ALLOW + "class ScriptedAgent(Agent):"),
    ),
}

_SETUP = """
from setuptools import setup
from mypyc.build import mypycify
setup(name="trial", py_modules=[], packages=[], ext_modules=mypycify({modules!r}, opt_level="3"))
"""


def _mypy_ini(pyproject: Path) -> str:
    """The project's mypy settings as a ``mypy.ini`` (setuptools cannot build the trial beside
    its ``pyproject.toml``): the Python version and the libraries without type stubs."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["mypy"]
    lines = ["[mypy]", f"python_version = {config['python_version']}"]
    for override in config.get("overrides", []):
        if override.get("ignore_missing_imports"):
            lines += [f"[mypy-{','.join(override['module'])}]", "ignore_missing_imports = True"]
    return "\n".join(lines) + "\n"


_RATE = """
import hashlib, sys, time
from harness.bench.workloads import twenty_call_scenario
from harness.session.simulated import run_session
scenario = twenty_call_scenario()
run_session(scenario, "naive", "is_error", 0)
best, digest = float("inf"), hashlib.sha256()
for round in range(int(sys.argv[1])):
    started = time.perf_counter()
    results = [run_session(scenario, "naive", "is_error", seed) for seed in range(1, 501)]
    best = min(best, time.perf_counter() - started)
for result in results:
    digest.update(result.trace_hash.encode())
print(f"{500 / best:.0f}", digest.hexdigest())
"""


def _tree(root: Path) -> None:
    """This checkout's committed tree in ``root``, with :data:`EDITS` made."""
    checkout = Path(__file__).resolve().parents[2]
    found = subprocess.run(["git", "-C", str(checkout), "archive", "HEAD"], capture_output=True, check=False)
    if found.returncode != 0:
        raise SystemExit(f"the trial needs a git checkout of harness; {checkout} is not one")
    archive = found.stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    for name, edits in EDITS.items():
        path = root / name
        text = path.read_text(encoding="utf-8")
        for old, new in edits:
            if old not in text:
                raise SystemExit(
                    f"{name}: the trial's edit no longer applies (not found: {old.strip()[:60]!r})"
                )
            text = text.replace(old, new, 1)
        path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.bench.mypyc_trial", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="timed rounds of 500 sessions per tree (default 5)"
    )
    parser.add_argument(
        "--pairs", type=int, default=2, help="times each tree is run, alternately (default 2)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pure, compiled = Path(tmp) / "pure", Path(tmp) / "compiled"
        for root in (pure, compiled):
            root.mkdir()
            _tree(root)
        (compiled / "setup_trial.py").write_text(_SETUP.format(modules=list(MODULES)))
        (compiled / "mypy.ini").write_text(_mypy_ini(compiled / "pyproject.toml"))
        for name in ("pyproject.toml", "setup.py"):  # setuptools would build the project, not the trial
            (compiled / name).unlink()
        print(f"compiling {len(MODULES)} modules with mypyc ...", flush=True)
        build = subprocess.run(
            [sys.executable, "setup_trial.py", "build_ext", "--inplace"],
            cwd=compiled,
            capture_output=True,
            text=True,
            check=False,
        )
        if build.returncode != 0:
            print(build.stdout[-2000:] + build.stderr[-2000:], file=sys.stderr)
            return 1
        for _ in range(args.pairs):
            for label, root in (("pure", pure), ("compiled", compiled)):
                env = {**os.environ, "PYTHONPATH": str(root)}
                run = subprocess.run(
                    [sys.executable, "-c", _RATE, str(args.rounds)],
                    cwd=root,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if run.returncode != 0:
                    print(f"{label}: {run.stderr.strip()[-2000:]}", file=sys.stderr)
                    return 1
                rate, digest = run.stdout.split()
                print(f"{label:9s} {rate:>6s} sessions/s  traces of seeds 1-500: {digest[:16]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
