"""The held-out protocol is kept in the history, not just in the docs (docs/reading.md).

The held-out set (``harness/fixtures/data/corpus/heldout/``) names, in ``protocol.toml``, the
commit that froze the reader. The commit that added the set's messages must come after it, and
the reader must be the same in both: so the texts were harvested and annotated after the reader
was frozen, and the figures recorded were the frozen reader's. No test reads the held-out texts
with the reader: the set is evaluated once, by hand, and its figures are recorded in the docs.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "harness" / "fixtures" / "data" / "corpus" / "heldout"
PROTOCOL = HELDOUT / "protocol.toml"
MESSAGES = HELDOUT / "messages.jsonl"


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def _history() -> None:
    """Skip, saying why, where the checkout has no history to check (no git, or a shallow clone)."""
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("no git history here: the held-out protocol is checked in a git checkout")
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone: the held-out protocol needs the commits it names")


def _protocol() -> dict[str, str]:
    if not PROTOCOL.is_file():
        pytest.skip("no held-out set has been added yet")
    data = tomllib.loads(PROTOCOL.read_text(encoding="utf-8"))
    assert {"reader_commit", "reader_frozen_in"} <= set(data), "protocol.toml names the frozen reader"
    return data


def _commit_that_added(path: Path) -> str:
    out = _git("log", "--diff-filter=A", "--format=%H", "--", str(path.relative_to(ROOT))).stdout.split()
    assert out, f"{path.relative_to(ROOT)} is not committed"
    return out[-1]


def test_the_reader_was_frozen_in_a_commit_before_the_held_out_set_was_added() -> None:
    data = _protocol()
    _history()
    frozen = _git("rev-parse", "--verify", data["reader_commit"] + "^{commit}")
    assert frozen.returncode == 0, (
        f"the frozen reader's commit {data['reader_commit']} is not in this history"
    )
    added = _commit_that_added(MESSAGES)
    assert frozen.stdout.strip() != added, "the set must come in a later commit than the reader"
    ancestor = _git("merge-base", "--is-ancestor", frozen.stdout.strip(), added)
    assert ancestor.returncode == 0, "the frozen reader's commit is no ancestor of the held-out set's"


def test_the_reader_that_read_the_held_out_set_is_the_frozen_one() -> None:
    data = _protocol()
    _history()
    added = _commit_that_added(MESSAGES)
    same = _git("diff", "--quiet", data["reader_commit"], added, "--", data["reader_frozen_in"])
    assert same.returncode == 0, f"{data['reader_frozen_in']} changed between the freeze and the held-out set"


def test_every_held_out_message_is_annotated_and_its_servers_were_never_harvested_before() -> None:
    _protocol()
    from harness.fixtures.corpus import messages

    held = messages("heldout")
    assert held, "the held-out split is empty"
    earlier = {m.server for m in messages("train") + messages("dev")}
    assert not {m.server for m in held} & earlier
    assert len({m.server for m in held}) >= 8 and len({m.stack for m in held}) >= 4


def test_the_one_evaluation_ran_with_the_frozen_reader() -> None:
    data = _protocol()
    _history()
    at = data.get("evaluated_at")
    assert at, "protocol.toml says where the one evaluation ran"
    assert _git("merge-base", "--is-ancestor", _commit_that_added(MESSAGES), at).returncode == 0
    same = _git("diff", "--quiet", data["reader_commit"], at, "--", data["reader_frozen_in"])
    assert same.returncode == 0, "the evaluation ran with another reader than the frozen one"
