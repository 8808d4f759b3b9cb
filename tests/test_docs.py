"""The README and docs/ cannot rot: what they cite exists and what they show runs.

* Every ``harness ...`` command line they cite (in code blocks, after ``$ `` or ``&& ``,
  and in inline code) names a subcommand whose ``--help`` works, and every ``--option`` it
  uses appears in that help.
* Every test file they cite exists, and every ``file.py::name`` (or a bare ``::name`` after
  a file on the same line or earlier in the same section) is defined in that file.
* Every repository path they name (``harness/...``, ``tests/...``, ``docs/...``) and every
  ``python -m harness...`` module exists.
* Every relative link points at a file; the README stays under 15 KB; nothing points outside
  the repository.
* The README's scenario example loads and runs a session as written.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`]+)`")
OPTION = re.compile(r"^\[*(--[A-Za-z][\w-]*)")
STOP = {">", ">>", "|", "&&", "&", ";", "--", "2>&1"}
TEST_REF = re.compile(r"(tests/[\w/.-]+?\.py)(?:::(\w+))?|(?<![\w.:])::(\w+)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FORBIDDEN = ("shared/reference", "mcp-deep-dive")


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _code_blocks(text: str) -> list[str]:
    return FENCE.findall(text)


def _block_commands(block: str) -> list[str]:
    """``harness ...`` lines of one code block, continuation lines joined."""
    lines = block.replace("\\\n", " ").splitlines()
    found = []
    for line in lines:
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:].strip()
        if not line.startswith("harness ") and "&& harness " in line:
            line = line[line.index("&& harness ") + 3 :]
        if line.startswith("harness "):
            found.append(line)
    return found


def _inline_commands(text: str) -> list[str]:
    prose = FENCE.sub("", text)
    spans = (" ".join(m.split()) for m in INLINE.findall(prose))
    return [s for s in spans if s.startswith("harness ")]


def cited_commands() -> list[tuple[str, str]]:
    out: dict[tuple[str, str], None] = {}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in _code_blocks(text):
            for command in _block_commands(block):
                out[(_rel(doc), command)] = None
        for command in _inline_commands(text):
            out[(_rel(doc), command)] = None
    return list(out)


def parse_command(command: str) -> tuple[str | None, list[str]]:
    """The subcommand and the ``--options`` a cited line uses (up to ``--``, a pipe or a redirect)."""
    tokens = shlex.split(command, comments=True)
    assert tokens and tokens[0] == "harness", command
    words: list[str] = []
    for token in tokens[1:]:
        if token in STOP or token.startswith((">", "|")):
            break
        words.append(token)
    sub = words[0] if words and not words[0].startswith("-") else None
    options = []
    for word in words:
        m = OPTION.match(word)
        if m:
            options.append(m.group(1).split("=")[0])
    return sub, options


COMMANDS = cited_commands()


def test_the_docs_cite_commands_at_all() -> None:
    subs = {parse_command(c)[0] for _, c in COMMANDS}
    assert {"list", "run", "compare", "plot", "session", "serve", "probe", "bench"} <= subs


@pytest.mark.parametrize(("doc", "command"), COMMANDS, ids=[f"{d}:{c[:60]}" for d, c in COMMANDS])
def test_every_cited_command_exists_and_accepts_its_options(doc: str, command: str) -> None:
    sub, options = parse_command(command)
    args = [sub, "--help"] if sub else ["--help"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, f"{doc}: `{command}`: `harness {' '.join(args)}` failed:\n{result.output}"
    missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", result.output)]
    assert not missing, f"{doc}: `{command}`: harness {sub} does not take {missing}"


def test_the_readme_opens_with_the_two_commands() -> None:
    first = _code_blocks(README.read_text(encoding="utf-8"))[0]
    lines = [line.split("#")[0].rstrip() for line in first.splitlines()]
    readme_test = "pip install -e '.[dev]' && python -m pytest -n auto"
    assert lines[:2] == ["pip install -e . && harness run", readme_test]


def test_ci_runs_the_readmes_exact_test_command() -> None:
    first = _code_blocks(README.read_text(encoding="utf-8"))[0]
    test_command = first.splitlines()[1].split("#")[0].split("&&")[-1].strip()
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in ci if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == test_command


def cited_tests() -> list[tuple[str, str, str | None]]:
    out: dict[tuple[str, str, str | None], None] = {}
    for doc in DOCS:
        current: str | None = None
        for line in doc.read_text(encoding="utf-8").splitlines():
            if line.startswith("#"):
                current = None  # a bare ::name never reaches across a heading
            for m in TEST_REF.finditer(line):
                path, name, bare = m.groups()
                if path is not None:
                    current = path
                    out[(_rel(doc), path, name)] = None
                elif current is not None:
                    out[(_rel(doc), current, bare)] = None
    return list(out)


TESTS = cited_tests()


def test_the_docs_cite_tests_at_all() -> None:
    assert len(TESTS) > 30


@pytest.mark.parametrize(("doc", "path", "name"), TESTS, ids=[f"{p}::{n}" if n else p for _, p, n in TESTS])
def test_every_cited_test_exists(doc: str, path: str, name: str | None) -> None:
    file = ROOT / path
    assert file.is_file(), f"{doc} cites {path}, which does not exist"
    if name is not None:
        source = file.read_text(encoding="utf-8")
        assert re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b", source, re.M), (
            f"{doc} cites {path}::{name}, which that file does not define"
        )


def cited_paths() -> list[tuple[str, str]]:
    out: dict[tuple[str, str], None] = {}
    for doc in DOCS:
        for m in re.finditer(
            r"(?<![\w/.])((?:tests|harness|scenarios|scripted_agents|notebooks|docs)/[\w/.-]*\w/?)",
            doc.read_text(encoding="utf-8"),
        ):
            out[(_rel(doc), m.group(1))] = None
    return list(out)


PATHS = cited_paths()


@pytest.mark.parametrize(("doc", "path"), PATHS, ids=[p for _, p in PATHS])
def test_every_cited_path_in_the_repository_exists(doc: str, path: str) -> None:
    assert (ROOT / path).exists(), f"{doc} cites {path}, which does not exist"


def cited_modules() -> list[tuple[str, str]]:
    out: dict[tuple[str, str], None] = {}
    for doc in DOCS:
        for m in re.finditer(r"python -m (harness[\w.]*)", doc.read_text(encoding="utf-8")):
            out[(_rel(doc), m.group(1))] = None
    return list(out)


MODULES = cited_modules()


@pytest.mark.parametrize(("doc", "module"), MODULES, ids=[m for _, m in MODULES])
def test_every_cited_python_m_module_exists(doc: str, module: str) -> None:
    assert importlib.util.find_spec(module) is not None, (
        f"{doc} runs python -m {module}, which does not exist"
    )


def _doc_files() -> list[Path]:
    extra = [p for p in (ROOT / "docs").rglob("*") if p.suffix in (".md", ".py", ".toml")]
    return sorted({*DOCS, *extra})


@pytest.mark.parametrize("path", _doc_files(), ids=_rel)
def test_nothing_points_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [f for f in FORBIDDEN if f in text]
    assert not found, f"{_rel(path)} mentions {found}: state the rule in docs/protocol.md instead"


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_every_relative_link_points_at_a_file(doc: str | Path) -> None:
    path = Path(doc)
    broken = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same page
        file = target.split("#")[0]
        if not (path.parent / file).exists():
            broken.append(target)
    assert not broken, f"{_rel(path)}: broken links {broken}"


def test_the_readme_scenario_example_runs_as_written(tmp_path: Path) -> None:
    from harness.scenarios.scenario import load_scenario
    from harness.session.simulated import run_session

    blocks = re.findall(r"^```toml\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) == 1, "the README should show exactly one scenario (a toml block)"
    path = tmp_path / "my_scenario.toml"
    path.write_text(blocks[0], encoding="utf-8")
    scenario = load_scenario(str(path))
    result = run_session(scenario, "reader", "is_error", 0)
    assert result.status == "ok", result.error
    assert result.subgoals_total == len(scenario.task.subgoals)


def test_the_oracle_solves_the_readme_scenario_example(tmp_path: Path) -> None:
    from harness.scenarios.scenario import load_scenario
    from harness.session.simulated import run_session

    block = re.findall(r"^```toml\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)[0]
    path = tmp_path / "my_scenario.toml"
    path.write_text(block, encoding="utf-8")
    for seed in range(5):
        result = run_session(load_scenario(str(path)), "oracle", "is_error", seed)
        assert result.success, (seed, result.to_row())
