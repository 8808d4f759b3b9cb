"""BFCL v4's multi-turn worlds, the one place the harness touches ``bfcl_eval``.

The Berkeley Function Calling Leaderboard (the ``bfcl-eval`` package, Apache-2.0) ships, for its
multi-turn categories, the tasks and their per-turn ground truth (its ``data`` folder), stateful
environment classes written in plain Python (a file system, messaging, posting, tickets, math,
trading, travel, a vehicle) with their function docs, and its own multi-turn checker. Everything
of it stays in its package and is read at run time; the harness copies none of it. What this
module takes:

* the tasks of :data:`CATEGORIES` and their ground truth (read from the package's data files);
* the function docs of each task's involved classes, turned into JSON Schema for ``tools/list``
  (BFCL writes ``dict`` for ``object``, ``float`` for ``number``, ``tuple`` for ``array``); a
  ``miss_func`` task's held-out functions apart, with the turn they arrive at;
* :class:`Episode`: one session's environment instances, made and called by BFCL's own
  ``execute_multi_turn_func_call`` (what BFCL's inference loop runs a model's call with), so a
  result, and a failure, is in BFCL's words (``{"error": "cd: temp: No such file or directory"}``,
  ``Error during execution: ...``);
* the judge: BFCL's own ``multi_turn_checker`` on the calls that reached the environment, turn by
  turn, against the ground truth (state and execution results).

Why the install skips bfcl-eval's requirements: the package pins numpy, sentence-transformers,
faiss and a dozen model SDKs for its other categories and its inference; the multi-turn data,
environment classes and checker import only the standard library and ``mpmath`` (``MathAPI``).
So ``pip install -e '.[bfcl]'`` brings ``mpmath`` and ``python -m harness.worlds.bfcl --install``
runs ``pip install --no-deps bfcl-eval==PINNED`` (:func:`install`); this module imports only
``bfcl_eval.constants.executable_backend_config``, ``bfcl_eval.constants.default_prompts`` and
``bfcl_eval.eval_checker.multi_turn_eval`` (never its ``eval_runner``, which imports every model
handler). BFCL's runner also fails an entry whose model stopped before its last turn
(``multi_turn:force_terminated``); that rule is one line in :meth:`Episode.verdict`, because the
runner that holds it cannot be imported without its heavy requirements.

BFCL's module keeps the instances it makes in its own globals, named by a model name and the task
id; an episode uses a model name of its own and drops its instances when it ends
(:meth:`Episode.close`), so two sessions of one task in a process never share a world.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import contextvars
import copy
import functools
import importlib
import inspect
import json
import math
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from harness.errors import UserError, unknown_name
from harness.worlds import installed

PACKAGE = "bfcl-eval"
MODULE = "bfcl_eval"
PINNED = "2026.3.23"
"""The version ``.ci/run`` and docs/worlds.md install; another is refused (one line)."""
REQUIREMENT = f"{PACKAGE}=={PINNED}"
INSTALL = "pip install -e '.[bfcl]' && python -m harness.worlds.bfcl --install"
"""What to run for BFCL's worlds: the extra (mpmath), then :data:`REQUIREMENT` with ``--no-deps``."""
WORLD = "bfcl"

CATEGORIES: tuple[str, ...] = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
"""The multi-turn categories served, in the order tables show them."""

DATA_VERSION = "BFCL_v4"
"""The data files' prefix in the package (``BFCL_v4_multi_turn_base.json``)."""


class BfclMissing(UserError):
    """bfcl-eval is not installed (or not the pinned version): one line, exit 2."""


def installed_version() -> str | None:
    """The installed package's version, or None (:func:`harness.worlds.installed`)."""
    return installed(PACKAGE)


def missing() -> str | None:
    """Why BFCL scenarios cannot run here (one line), or None when they can."""
    version = installed_version()
    if version is None:
        return f"BFCL scenarios need bfcl-eval: {INSTALL}"
    if version != PINNED:
        return f"BFCL scenarios need {PACKAGE}=={PINNED}, found {version}: {INSTALL}"
    try:
        importlib.import_module("mpmath")
    except ImportError:
        return f"BFCL scenarios need mpmath (its MathAPI imports it): {INSTALL}"
    return None


def require() -> None:
    why = missing()
    if why is not None:
        raise BfclMissing(why)


def _config() -> Any:
    require()
    return importlib.import_module(f"{MODULE}.constants.executable_backend_config")


def _data(name: str) -> list[dict[str, Any]]:
    """A JSON-lines data file of the package (``data/<name>``)."""
    text = resources.files(MODULE).joinpath("data", *name.split("/")).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _number(entry_id: str) -> str:
    return entry_id.rsplit("_", 1)[1]


@functools.cache
def entries(category: str) -> dict[str, dict[str, Any]]:
    """A category's tasks by id (the number BFCL's id ends with), its ground truth put in as
    ``ground_truth``."""
    require()
    if category not in CATEGORIES:
        raise unknown_name(f"{WORLD} category", category, CATEGORIES)
    answers = {a["id"]: a["ground_truth"] for a in _data(f"possible_answer/{DATA_VERSION}_{category}.json")}
    out: dict[str, dict[str, Any]] = {}
    for entry in _data(f"{DATA_VERSION}_{category}.json"):
        out[_number(entry["id"])] = {**entry, "ground_truth": answers[entry["id"]]}
    return out


def task_ids(category: str) -> tuple[str, ...]:
    """A category's task ids in their numbers' order."""
    return tuple(sorted(entries(category), key=int))


def entry(category: str, task_id: str) -> dict[str, Any]:
    found = entries(category)
    if task_id not in found:
        raise unknown_name(f"{WORLD}/{category} task", task_id, task_ids(category))
    return found[task_id]


@functools.cache
def additional_function_prompt() -> str:
    """What BFCL's inference says as the user at a turn that only brings held-out functions."""
    require()
    prompts = importlib.import_module(f"{MODULE}.constants.default_prompts")
    return str(prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC)


def turn_prompts(category: str, task_id: str) -> tuple[str, ...]:
    """Each turn's user message (a turn with none, where held-out functions arrive, says what
    BFCL's inference says there)."""
    out = []
    for messages in entry(category, task_id)["question"]:
        said = [str(m["content"]) for m in messages if m.get("role") == "user"]
        out.append("\n".join(said) if said else additional_function_prompt())
    return tuple(out)


# -- tools ----------------------------------------------------------------------------------------

_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}
"""BFCL's type names that JSON Schema spells otherwise (``any``: no type)."""


def json_schema(node: Any) -> Any:
    """A BFCL function doc's parameter schema as JSON Schema: the same, its type names mapped."""
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            mapped = _TYPES.get(value, value)
            if mapped is not None:
                out[key] = mapped
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {name: json_schema(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = json_schema(value)
        else:
            out[key] = value
    return out


@dataclass(frozen=True)
class ToolSpec:
    """A BFCL function as an MCP server lists it: BFCL's name, description and schema."""

    name: str
    description: str
    input_schema: dict[str, Any]
    owner: str
    """The environment class whose method it is."""


@functools.cache
def class_docs(class_name: str) -> tuple[ToolSpec, ...]:
    """An environment class's function docs, in BFCL's order."""
    config = _config()
    docs = _data(f"multi_turn_func_doc/{config.MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]}")
    return tuple(
        ToolSpec(
            str(d["name"]), str(d.get("description", "")), json_schema(d.get("parameters") or {}), class_name
        )
        for d in docs
    )


@dataclass(frozen=True)
class Tools:
    """What a task serves: the tools listed from the start, and those held out until a turn."""

    initial: tuple[ToolSpec, ...]
    held: tuple[tuple[int, tuple[ToolSpec, ...]], ...]
    """(turn index, the functions that arrive at it), for ``miss_func``."""

    def all(self) -> tuple[ToolSpec, ...]:
        return (*self.initial, *(t for _, tools in self.held for t in tools))


@functools.cache
def tools(category: str, task_id: str) -> Tools:
    """The functions of the task's involved classes, as BFCL's inference gives them to a model:
    every doc of every involved class, the ``missed_function`` ones held out until their turn."""
    found = entry(category, task_id)
    every = [spec for name in found["involved_classes"] for spec in class_docs(name)]
    held: list[tuple[int, tuple[ToolSpec, ...]]] = []
    for turn, names in sorted(found.get("missed_function", {}).items(), key=lambda kv: int(kv[0])):
        taken = tuple(s for s in every if s.name in names)
        every = [s for s in every if s.name not in names]
        held.append((int(turn), taken))
    return Tools(tuple(every), tuple(held))


# -- the plan -------------------------------------------------------------------------------------


@functools.cache
def _method(class_name: str, method: str) -> inspect.Signature | None:
    config = _config()
    module = importlib.import_module(config.CLASS_FILE_PATH_MAPPING[class_name])
    found = getattr(getattr(module, class_name), method, None)
    return inspect.signature(found) if callable(found) else None


def parse_call(call: str, classes: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """A ground-truth call string (``mv(source='a', destination='b')``, ``sort('f.pdf')``) as a
    function name and keyword arguments; positional ones named by the method's signature."""
    tree = ast.parse(call, mode="eval").body
    if not isinstance(tree, ast.Call) or not isinstance(tree.func, ast.Name):
        raise ValueError(f"not a call: {call!r}")
    name = tree.func.id
    args: dict[str, Any] = {k.arg: ast.literal_eval(k.value) for k in tree.keywords if k.arg}
    if tree.args:
        signature = next((s for s in (_method(c, name) for c in classes) if s is not None), None)
        if signature is None:
            raise ValueError(f"{call!r}: no involved class has {name}")
        params = [p for p in signature.parameters if p != "self"]
        for param, value in zip(params, tree.args, strict=False):
            args[param] = ast.literal_eval(value)
    return name, _jsonable(args)


def _jsonable(value: Any) -> Any:
    """What the value is once it crossed JSON (a tuple a list), as the agent will send it."""
    result: Any = json.loads(json.dumps(value))
    return result


def call_string(function: str, arguments: Mapping[str, Any]) -> str:
    """A call as BFCL's decoded model output writes it: ``name(key=value, ...)``, values as Python
    literals (the JSON the agent sent, read back)."""
    for key in arguments:
        if not key.isidentifier():
            raise ValueError(f"{function}() got an unexpected keyword argument {key!r}")
    return f"{function}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


@dataclass(frozen=True)
class Plan:
    """A task's ground truth: each turn's calls, and which functions changed the environment."""

    turns: tuple[tuple[tuple[str, dict[str, Any]], ...], ...]
    writes: frozenset[str]
    failures: int = 0
    """Calls of the plan whose result is a failure by BFCL's conventions (:func:`failed`), run on
    a fresh environment."""

    @property
    def calls(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        return tuple(c for turn in self.turns for c in turn)


@functools.cache
def plan(category: str, task_id: str) -> Plan:
    """The ground truth parsed, and, by running it once on a fresh environment, which of its calls
    change it (the writes a ``post_commit`` fault can strike)."""
    found = entry(category, task_id)
    classes = found["involved_classes"]
    turns = tuple(tuple(parse_call(c, classes) for c in turn) for turn in found["ground_truth"])
    episode = Episode(category, task_id, model=f"harness_plan_{category}_{task_id}")
    writes: set[str] = set()
    failures = 0
    try:
        for turn, calls in enumerate(turns):
            episode.turn = turn
            for function, args in calls:
                before = episode.state()
                failures += failed(episode.run(function, args))
                if episode.state() != before:
                    writes.add(function)
    finally:
        episode.close()
    return Plan(turns, frozenset(writes), failures)


# -- an episode -----------------------------------------------------------------------------------

VERDICTS = 4096
"""Verdicts a process keeps (:data:`_VERDICTS`)."""
_VERDICTS: collections.OrderedDict[tuple[str, str, tuple[tuple[str, ...], ...]], dict[str, Any]] = (
    collections.OrderedDict()
)
"""BFCL's verdicts by (category, task, each turn's calls), the least recently used dropped first.

Why a memo: BFCL's checker is a function of the task and the calls alone (it replays both the
calls and the ground truth on fresh instances of its own, whose randomness is seeded from the
task's own config), and it is about half of a BFCL session's time. Sessions of one task that make
the same calls (agents and strategies that walk alike, seed after seed) get the same verdict, so
it is asked once. :func:`plain` skips it; ``tests/worlds/test_bfcl.py`` holds the two equal."""

_plain: contextvars.ContextVar[bool] = contextvars.ContextVar("bfcl_plain", default=False)


@contextlib.contextmanager
def plain() -> Iterator[None]:
    """BFCL's own paths alone: its runner for every call (skipping :meth:`Episode._call`) and its
    checker for every verdict (skipping :data:`_VERDICTS`), which the shortcuts are tested
    against."""
    token = _plain.set(True)
    try:
        yield
    finally:
        _plain.reset(token)


def _plain_values(value: Any) -> bool:
    """Whether a call's values cross the runner's ``repr``/``eval`` unchanged: JSON's, every float
    finite, every key a name (the runner refuses a key that is none)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and k.isidentifier() for k in value) and all(
            _plain_values(v) for v in value.values()
        )
    if isinstance(value, list):
        return all(_plain_values(v) for v in value)
    return value is None or isinstance(value, str | int | bool)


ERROR_PREFIX = "Error during execution: "
"""How BFCL's runner words an exception a function raised (its ``execute_multi_turn_func_call``)."""


def failed(text: str) -> bool:
    """Whether a result is a failure by BFCL's conventions: its runner's exception text, or an
    object whose ``error`` field the environment set (how its classes report a failure)."""
    if text.startswith(ERROR_PREFIX):
        return True
    if not text.startswith("{"):
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


class Episode:
    """One session's BFCL world: the task's environment instances, made and called by BFCL's own
    runner under ``model`` (a name of this session's: BFCL keys its instances by it), and every
    call that reached them, turn by turn."""

    def __init__(self, category: str, task_id: str, model: str) -> None:
        require()
        self.category, self.task_id = category, task_id
        self.entry = entry(category, task_id)
        self.model = re.sub(r"[^A-Za-z0-9_]", "_", model)
        self.utils = importlib.import_module(f"{MODULE}.eval_checker.multi_turn_eval.multi_turn_utils")
        self.turn = 0
        self.calls: list[list[str]] = [[] for _ in self.entry["ground_truth"]]
        """Each turn's calls that reached the environment, as BFCL's decoded output writes them."""
        self.results: list[tuple[str, dict[str, Any], str]] = []
        self.methods: dict[str, Any] | None = None
        _, self.instances = self._execute([])

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category

    def _execute(self, calls: list[str]) -> tuple[list[str], dict[str, Any]]:
        found: tuple[list[str], dict[str, Any]] = self.utils.execute_multi_turn_func_call(
            calls, self.entry["initial_config"], self.entry["involved_classes"], self.model,
            self.entry["id"], long_context=self.long_context, is_evaL_run=False,
        )  # fmt: skip
        return found

    def run(self, function: str, arguments: Mapping[str, Any]) -> str:
        """Run one call in this world, at the current turn; its result in BFCL's words (a failure
        too: an ordinary result whose text says so, as BFCL's runner returns it)."""
        call = call_string(function, arguments)
        fast = None if _plain.get() else self._call(function, arguments)
        text = fast if fast is not None else str(self._execute([call])[0][0])
        self.calls[self.turn].append(call)
        self.results.append((function, dict(arguments), text))
        return text

    def _call(self, function: str, arguments: Mapping[str, Any]) -> str | None:
        """The shortcut beside BFCL's runner: the same instance's method called with the same
        values, its result or exception worded as the runner words it. The runner, per call, lists
        every method of every instance (``inspect.getmembers``, half of a session's time once the
        verdicts are memoized) and ``eval`` s the call string; here the methods are listed once
        per episode. None (take the runner) for anything it is not held equal to the runner on
        (``tests/worlds/test_bfcl.py``): a name that is no public method, a value that is no
        finite JSON value."""
        method = self._methods().get(function)
        if method is None or not _plain_values(arguments):
            return None
        try:
            result = method(**copy.deepcopy(dict(arguments)))
        except Exception as exc:  # the runner's own catch-all, worded as it words it
            return f"{ERROR_PREFIX}{exc}"
        if type(result) is str:
            return result
        if type(result) is dict:
            try:
                return json.dumps(result)
            except (TypeError, ValueError):
                return str(result)
        return str(result)

    def _methods(self) -> dict[str, Any]:
        """Each public method name of the instances, bound to its instance, a later class's over an
        earlier one's (as the runner maps them); listed once per episode."""
        if self.methods is None:
            self.methods = {
                name: method
                for instance in self.instances.values()
                for name, method in inspect.getmembers(instance, predicate=inspect.ismethod)
                if not name.startswith("_")
            }
        return self.methods

    def state(self) -> dict[str, Any]:
        """The instances' public attributes (what BFCL's state check compares), copied."""
        return {
            name: copy.deepcopy({k: v for k, v in vars(inst).items() if not k.startswith("_")})
            for name, inst in self.instances.items()
        }

    def verdict(self, turns_reached: int) -> dict[str, Any]:
        """BFCL's verdict on the calls that reached the world: its runner's rule that a model which
        stopped before the last turn fails (``multi_turn:force_terminated``), then its own
        ``multi_turn_checker`` on each turn's calls (one step per call) against the ground truth."""
        truth = self.entry["ground_truth"]
        if turns_reached < len(truth):
            return {
                "valid": False,
                "error_type": "multi_turn:force_terminated",
                "error_message": f"the session reached {turns_reached} of {len(truth)} turns",
            }
        key = (self.category, self.task_id, tuple(tuple(turn) for turn in self.calls))
        if not _plain.get() and key in _VERDICTS:
            _VERDICTS.move_to_end(key)
            return copy.deepcopy(_VERDICTS[key])
        found = self._check()
        _VERDICTS[key] = copy.deepcopy(found)
        if len(_VERDICTS) > VERDICTS:
            _VERDICTS.popitem(last=False)
        return found

    def _check(self) -> dict[str, Any]:
        """BFCL's ``multi_turn_checker`` itself, on this episode's calls: it replays them, and the
        ground truth, on fresh instances of its own."""
        checker = importlib.import_module(f"{MODULE}.eval_checker.multi_turn_eval.multi_turn_checker")
        decoded = [[[call] for call in turn] for turn in self.calls]
        category = self.entry["id"].rsplit("_", 1)[0]
        try:
            found: dict[str, Any] = checker.multi_turn_checker(
                decoded, self.entry["ground_truth"], self.entry, category, self.model
            )
        finally:
            self._drop(f"{self.model}_")
        return found

    def close(self) -> None:
        """Drop this episode's instances from BFCL's module (the runner's and the checker's)."""
        self._drop(f"{self.model}_")

    def _drop(self, prefix: str) -> None:
        space = vars(self.utils)
        for key in [k for k in space if k.startswith(prefix) and k.endswith("_instance")]:
            del space[key]


def error_strings() -> tuple[str, ...]:
    """Every string literal of BFCL's environment classes that a failure carries: the values of
    ``"error"`` in the dicts they return and the messages of what they raise (for the test that
    the world agent's code holds none of them)."""
    config = _config()
    out: set[str] = set()
    for class_name in dict.fromkeys(
        c for cat in CATEGORIES for e in entries(cat).values() for c in e["involved_classes"]
    ):
        module = importlib.import_module(config.CLASS_FILE_PATH_MAPPING[class_name])
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "error":
                        out.update(_literals(value))
            elif isinstance(node, ast.Raise) and node.exc is not None:
                out.update(_literals(node.exc))
    out.add(ERROR_PREFIX.strip())
    return tuple(sorted(s for s in out if len(s.strip()) >= 8))


def _literals(node: ast.AST) -> list[str]:
    """The string pieces in an expression (an f-string's constant parts too)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def census() -> list[dict[str, Any]]:
    """Per category: its tasks, turns, planned calls, held-out functions, and the plan's calls that
    fail on a fresh environment (what docs/worlds.md quotes)."""
    out = []
    for category in CATEGORIES:
        ids = task_ids(category)
        plans = [plan(category, i) for i in ids]
        out.append({
            "category": category,
            "tasks": len(ids),
            "turns": sum(len(p.turns) for p in plans),
            "planned_calls": sum(len(p.calls) for p in plans),
            "empty_turns": sum(1 for p in plans for t in p.turns if not t),
            "held_functions": sum(len(entry(category, i).get("missed_function", {})) for i in ids),
            "plan_calls_failing": sum(p.failures for p in plans),
        })  # fmt: skip
    return out


def install(options: Sequence[str] = ()) -> int:
    """``pip install --no-deps`` the pinned bfcl-eval into this interpreter: its data, environment
    classes and checker, none of its requirements (the module's docstring says why); ``options``
    go to pip (``-q``)."""
    import subprocess

    command = [sys.executable, "-m", "pip", "install", *options, "--no-deps", REQUIREMENT]
    print(" ".join(command[2:]), file=sys.stderr)
    return subprocess.call(command)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.worlds.bfcl``: :func:`census`, one JSON object per category;
    ``--install [PIP OPTIONS]``: :func:`install`."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--install"]:
        return install(args[1:])
    if args:
        print("usage: python -m harness.worlds.bfcl [--install [PIP OPTIONS]]", file=sys.stderr)
        return 2
    why = missing()
    if why is not None:
        print(f"harness.worlds.bfcl: {why}", file=sys.stderr)
        return 2
    for row in census():
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
