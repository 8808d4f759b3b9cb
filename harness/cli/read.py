"""``harness read``: read tool error texts the way an agent could, or measure that reading.

``harness read TEXT...`` prints one line per text; ``--jsonl FILE`` (``-`` for stdin) reads
objects with a ``text`` key (and optional ``arguments`` and ``tools``); ``--format jsonl`` prints
one JSON object per input, in order. ``harness read --evaluate --split dev`` compares the reader
with the corpus's hand annotations and prints per-field agreement, overall and per stack
(``docs/reading.md``); ``--dataset library`` does the same for the library texts (per ecosystem),
``--dataset both`` for each of the two in turn. ``--misses`` lists the texts the reader gets
wrong, for ``train`` and ``dev`` (both were looked at while the reader was written) and for
``heldout`` only in the same run as its one evaluation (the protocol in ``docs/reading.md``).
The split once called ``test`` is ``dev``: asking for ``test`` says so.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from harness.errors import UserError

FORMATS = ("text", "jsonl", "json")
SPLITS = ("train", "dev", "heldout", "all")
RENAMED = {
    "test": "the split once called 'test' is 'dev' now: it was looked at while the reader was written, "
    "so none of its figures is held out (docs/reading.md); the held-out split is 'heldout'"
}
DATASETS = ("corpus", "library", "both")


@dataclass(frozen=True)
class _Input:
    text: str
    arguments: Mapping[str, Any] | None
    tools: Collection[str] | None


@click.command("read")
@click.argument("texts", nargs=-1)
@click.option(
    "--jsonl",
    "jsonl",
    metavar="FILE",
    default=None,
    help="Read JSON lines, each an object with 'text' (and optional 'arguments', 'tools'); '-' is stdin.",
)
@click.option(
    "--arguments",
    "arguments_json",
    metavar="JSON",
    default=None,
    help="The failed call's arguments, a JSON object (for TEXT).",
)
@click.option(
    "--tools", metavar="NAMES", default=None, help="Comma-separated tool names the agent knows (for TEXT)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text: one line per input; jsonl: one JSON object per input; json: one JSON document.",
)
@click.option("--evaluate", is_flag=True, help="Compare the reader with the corpus's hand annotations.")
@click.option(
    "--split",
    metavar="[" + "|".join(SPLITS) + "]",
    default=None,
    help="With --evaluate: the split [default: train]. dev was looked at while the reader was written; "
    "heldout was harvested after it was frozen (docs/reading.md); all is train and dev.",
)
@click.option(
    "--dataset",
    type=click.Choice(DATASETS),
    default=None,
    help="With --evaluate: the real servers' corpus, the library texts, or each of them [default: corpus].",
)
@click.option(
    "--misses",
    is_flag=True,
    help="With --evaluate: list the texts the reader gets wrong (train, dev; heldout in its one evaluation).",
)
def command(
    texts: tuple[str, ...],
    jsonl: str | None,
    arguments_json: str | None,
    tools: str | None,
    fmt: str,
    evaluate: bool,
    split: str | None,
    dataset: str | None,
    misses: bool,
) -> int:
    """Read tool error TEXTs: category, the argument named, the valid form, when to retry,
    whether the text is enough to act on, and a call it asks for."""
    if split is not None and split not in SPLITS:
        if split in RENAMED:
            raise UserError(f"--split {split}: {RENAMED[split]}")
        raise UserError(f"--split {split!r}: not a split (valid: {', '.join(SPLITS)})")
    if evaluate:
        if texts or jsonl is not None or arguments_json is not None or tools is not None:
            raise UserError(
                "--evaluate reads the corpus: give no TEXT, --jsonl, --arguments or --tools with it"
            )
        if fmt == "jsonl":
            raise UserError("--evaluate prints --format text or json, not jsonl")
        _evaluate(dataset or "corpus", split or "train", fmt, misses)
        return 0
    if split is not None or misses or dataset is not None:
        flag = "--split" if split is not None else "--misses" if misses else "--dataset"
        raise UserError(f"{flag} goes with --evaluate")
    if jsonl is not None:
        if texts or arguments_json is not None or tools is not None:
            raise UserError(
                "give TEXT arguments or --jsonl FILE, not both (--arguments and --tools go with TEXT)"
            )
        inputs = _read_jsonl(jsonl)
    elif texts:
        inputs = [_Input(t, _arguments(arguments_json), _tools(tools)) for t in texts]
    else:
        raise UserError("say what to read: TEXT..., --jsonl FILE (or -), or --evaluate")
    _print_readings(inputs, fmt)
    return 0


def _arguments(raw: str | None) -> Mapping[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise UserError(f"--arguments is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UserError(f"--arguments must be a JSON object, not {type(value).__name__}")
    return value


def _tools(raw: str | None) -> Collection[str] | None:
    if raw is None:
        return None
    return tuple(name.strip() for name in raw.split(",") if name.strip())


def _read_jsonl(source: str) -> list[_Input]:
    if source == "-":
        content = sys.stdin.read()
        where = "stdin"
    else:
        path = Path(source)
        if not path.is_file():
            raise UserError(f"--jsonl: no such file: {source}")
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"--jsonl: cannot read {source}: {exc}") from None
        where = source
    out = []
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError as exc:
            raise UserError(f"{where}:{number}: not JSON: {exc}") from None
        if not isinstance(line, dict):
            raise UserError(
                f"{where}:{number}: expected a JSON object with a 'text' key, got {type(line).__name__}"
            )
        text = line.get("text")
        if not isinstance(text, str):
            what = "no 'text' key" if "text" not in line else f"'text' is {type(text).__name__}, not a string"
            raise UserError(f"{where}:{number}: {what}")
        arguments = line.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise UserError(f"{where}:{number}: 'arguments' must be a JSON object")
        names = line.get("tools")
        if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise UserError(f"{where}:{number}: 'tools' must be a list of strings")
        out.append(_Input(text, arguments, tuple(names) if names is not None else None))
    return out


def _print_readings(inputs: list[_Input], fmt: str) -> None:
    from harness.reading import read

    readings = [read(i.text, arguments=i.arguments, tools=i.tools) for i in inputs]
    if fmt == "json":
        click.echo(json.dumps([r.to_json() for r in readings], ensure_ascii=False, indent=2))
        return
    for reading in readings:
        if fmt == "jsonl":
            click.echo(json.dumps(reading.to_json(), ensure_ascii=False))
        else:
            click.echo(_line(reading.to_json()))


def _one_line(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def _line(doc: dict[str, Any]) -> str:
    """A reading as one readable line: the category first, then what else the text gave."""
    parts = [f"{doc['category']:<16}"]
    if doc["argument"] is not None:
        parts.append(f"argument: {_one_line(doc['argument'])}")
    if doc["expected"] is not None:
        parts.append(f"expected: {_one_line(doc['expected'])}")
    if doc["retry_after_s"] is not None:
        parts.append(f"retry after {doc['retry_after_s']:g} s")
    if doc["instruction"] is not None:
        call = doc["instruction"]
        parts.append(f"asks to call: {_one_line(call['tool'])} {_one_line(call['arguments'])}")
    parts.append("actionable" if doc["actionable"] else "not actionable")
    return "  ".join(parts).rstrip()


def _evaluate(dataset: str, split: str, fmt: str, misses: bool) -> None:
    from harness.reading import evaluate

    if misses and split == "all":
        raise UserError("--misses lists texts of one split: give --split train, dev or heldout")
    if split == "heldout" and dataset != "corpus":
        raise UserError("--split heldout: only the corpus has a held-out split (give --dataset corpus)")
    names = ("corpus", "library") if dataset == "both" else (dataset,)
    results = {}
    for name in names:
        records, groups = _records(name, split)
        results[name] = (records, groups, evaluate(records, split=split))
    if fmt == "json":
        docs = {name: result.to_json() for name, (_, _, result) in results.items()}
        click.echo(json.dumps(docs if dataset == "both" else docs[dataset], indent=2))
        return
    for number, (name, (records, groups, result)) in enumerate(results.items()):
        if number:
            click.echo("")
        _table(name, split, groups, result)
        _beside(records, split)
        if name == "corpus":
            _per_server(records)
        if misses:
            _misses(records)


def _records(dataset: str, split: str) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """The annotated records of a dataset's split, and the groups its table has columns for."""
    from harness.fixtures import corpus

    chosen = None if split == "all" else split
    if dataset == "library":
        return corpus.library_texts(chosen), corpus.ECOSYSTEMS
    # "all" is what was looked at (train and dev): the held-out split is only read on its own.
    records = corpus.messages(chosen) if chosen else corpus.messages("train") + corpus.messages("dev")
    if not records:
        raise UserError(f"--split {split}: no messages in it yet (docs/reading.md, the held-out protocol)")
    return records, corpus.STACKS


def _table(dataset: str, split: str, groups: tuple[str, ...], result: Any) -> None:
    from harness.reading import FIELDS

    present = [g for g in groups if g in result.by_stack]
    header = ["field", f"all ({result.messages})", *(f"{g} ({_size(result.by_stack[g])})" for g in present)]
    rows = [header]
    for field in FIELDS:
        cells = [field, _cell(result.overall[field].correct, result.overall[field].total)]
        cells += [_cell(result.by_stack[g][field].correct, result.by_stack[g][field].total) for g in present]
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    what = "the hand annotations" if dataset == "corpus" else "the library texts' hand annotations"
    click.echo(f"reader against {what}, split {split}: {result.messages} messages")
    for row in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    click.echo(
        "expected: equal after normalising (docs/reading.md); retry_after_s: within 0.5 s; null == null"
    )


@dataclass(frozen=True)
class _Grouped:
    """A record seen under another group (its server in place of its stack)."""

    record: Any
    stack: str

    def __getattr__(self, name: str) -> Any:
        return getattr(self.record, name)


def _beside(records: tuple[Any, ...], split: str) -> None:
    """Two figures that say what the table is worth: the argument on the texts that name one
    (the annotation gives one), and what a reader that never reads would score (the split's most
    common category, no argument, no valid form, no wait, always actionable)."""
    from harness.reading import evaluate

    named = [r for r in records if r.argument is not None]
    if named:
        score = evaluate(named, split=split).overall["argument"]
        click.echo(f"argument where the text names one: {_cell(score.correct, score.total)}")
    if not records:
        return
    common = Counter(r.category for r in records).most_common(1)[0][0]
    category = sum(r.category == common for r in records)
    argument = sum(r.argument is None for r in records)
    click.echo(
        f"a constant answer ({common}, no argument, always actionable): "
        f"category {_cell(category, len(records))}, argument {_cell(argument, len(records))}"
    )


def _per_server(records: tuple[Any, ...]) -> None:
    """The same fields per server, one row each (a split's servers are its units)."""
    from harness.reading import FIELDS, evaluate

    servers = list(dict.fromkeys(r.server for r in records))
    result = evaluate([_Grouped(r, r.server) for r in records])
    stack = {r.server: r.stack for r in records}
    rows = [["server", "stack", "messages", *FIELDS]]
    for server in servers:
        scores = result.by_stack[server]
        cells = [_cell(scores[f].correct, scores[f].total) for f in FIELDS]
        rows.append([server, stack[server], str(scores[FIELDS[0]].total), *cells])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    click.echo("")
    for row in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _misses(records: tuple[Any, ...]) -> None:
    from harness.reading._evaluate import disagreements

    for record, reading, wrong in disagreements(records):
        click.echo(f"\n{getattr(record, 'id', '?')} ({record.stack}): {', '.join(wrong)}")
        for field in wrong:
            click.echo(f"  {field}: read {getattr(reading, field)!r}, annotated {getattr(record, field)!r}")
        click.echo("  text: " + _one_line(record.text[:400]))


def _size(scores: Mapping[str, Any]) -> int:
    return int(next(iter(scores.values())).total)


def _cell(correct: int, total: int) -> str:
    if not total:
        return "–"
    accuracy = correct / total
    return f"{accuracy:.2f} ({correct}/{total})" if not math.isnan(accuracy) else "–"
