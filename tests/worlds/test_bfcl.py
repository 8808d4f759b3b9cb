"""BFCL v4's multi-turn tasks as worlds: its tools over the MCP core, its turns, its held-out
functions registered mid-session, its own checker as the judge (harness.worlds.bfcl)."""

from __future__ import annotations

import ast
import collections
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from helpers.cli import cli

from harness.batch.kinds import kind_for
from harness.protocol.errors import INTERNAL_ERROR
from harness.scenarios.scenario import Task
from harness.session.agent import Action, Agent, CallTool, Finish, Observation, Start
from harness.worlds import bfcl
from harness.worlds.bfcl_scenario import CONDITIONS, load
from harness.worlds.scenario import load_source, world_source

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "worlds.md"
MISS_FUNC = "bfcl/multi_turn_miss_func/0"
"""A miss_func task whose held-out function (``sort``) arrives at turn 4 of 5."""


def _trace(
    name: str, agent: str | Agent, strategy: str = "is_error", seed: int = 0, **kw: Any
) -> tuple[Any, list[dict[str, Any]]]:
    buffer = io.BytesIO()
    scenario = load(name)
    result = kind_for(scenario).run_session(scenario, agent, strategy, seed, trace=buffer, **kw)  # type: ignore[attr-defined]
    return result, [json.loads(line) for line in buffer.getvalue().splitlines()]


def _sent(lines: list[dict[str, Any]], method: str) -> list[int]:
    return [
        i for i, line in enumerate(lines) if line.get("dir") == "c2s" and line["msg"].get("method") == method
    ]


# -- names and tools ------------------------------------------------------------------------------


def test_harness_list_json_lists_every_task_of_the_four_multi_turn_categories(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["list", "--json"], capsys)
    found = [name for name in json.loads(out)["worlds"] if name.startswith("bfcl/")]
    assert code == 0 and len(found) >= 400
    assert {name.split("/")[1] for name in found} == set(bfcl.CATEGORIES)
    assert json.loads(out)["worlds"]["bfcl/multi_turn_base/0"] == " ".join(
        bfcl.turn_prompts("multi_turn_base", "0")[0].split()
    )


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            {"type": "dict", "properties": {"a": {"type": "float"}}},
            {"type": "object", "properties": {"a": {"type": "number"}}},
        ),
        ({"type": "tuple", "items": {"type": "integer"}}, {"type": "array", "items": {"type": "integer"}}),
        ({"type": "any", "description": "x"}, {"description": "x"}),
        ({"type": "array", "items": {"type": "dict"}}, {"type": "array", "items": {"type": "object"}}),
        ({"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["a"]}),
    ],
)
def test_bfcl_type_names_become_json_schema_s(given: dict[str, Any], expected: dict[str, Any]) -> None:
    assert bfcl.json_schema(given) == expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("mv(source='a', destination='b')", ("mv", {"source": "a", "destination": "b"})),
        ("cd(folder='..')", ("cd", {"folder": ".."})),
        ("sort('f.pdf')", ("sort", {"file_name": "f.pdf"})),
    ],
)
def test_a_ground_truth_call_is_read_as_a_name_and_keyword_arguments(
    call: str, expected: tuple[str, dict[str, Any]]
) -> None:
    assert bfcl.parse_call(call, ["GorillaFileSystem"]) == expected
    name, args = expected
    assert bfcl.parse_call(bfcl.call_string(name, args), ["GorillaFileSystem"]) == expected


def test_every_task_s_tools_are_its_classes_function_docs_each_listed_once() -> None:
    for category in bfcl.CATEGORIES:
        for task_id in bfcl.task_ids(category)[::25]:
            found = bfcl.tools(category, task_id)
            listed = [t.name for t in found.all()]
            assert len(listed) == len(set(listed))
            for spec in found.all():
                assert spec.input_schema.get("type", "object") == "object"
            held = {n for _, specs in found.held for n in (s.name for s in specs)}
            assert held == {
                n for ns in bfcl.entry(category, task_id).get("missed_function", {}).values() for n in ns
            }


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("bfcl/multi_turn_nope", "unknown bfcl category 'multi_turn_nope'"),
        ("bfcl/multi_turn_base/9999", "unknown bfcl/multi_turn_base task '9999'"),
        ("bfcl/multi_turn_base/0/flooded", "unknown bfcl condition 'flooded'"),
        ("bfcl/multi_turn_base/0/raised/x", "a fault draw is a whole number from 1 ('x' is not"),
        ("bfcl/multi_turn_base/0/raised/0", "draw 0 is the name without it"),
        ("bfcl/multi_turn_base/0/raised/1/2", "a BFCL scenario is bfcl/<category>/<id>[/<condition>[/<d>]]"),
    ],
)
def test_a_wrong_bfcl_name_is_one_line_exit_2_naming_what_is_wrong(
    capsys: pytest.CaptureFixture[str], spec: str, problem: str
) -> None:
    code, out, err = cli(["session", spec, "--json"], capsys)
    assert code == 2 and out == "" and problem in err and len(err.strip().splitlines()) == 1


@pytest.mark.without_agentdojo
def test_without_bfcl_eval_a_bfcl_scenario_is_one_line_saying_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bfcl, "installed_version", lambda: None)
    code, out, err = cli(["session", "bfcl/multi_turn_base/0", "--json"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert bfcl.INSTALL in err


# -- the session ----------------------------------------------------------------------------------


def test_a_held_out_function_is_unlisted_until_its_turn_then_registered_with_list_changed() -> None:
    (turn, (held, *_)), *_ = load(MISS_FUNC).held
    result, lines = _trace(MISS_FUNC, "oracle")
    lists = _sent(lines, "tools/list")
    first = next(
        line
        for line in lines
        if line.get("dir") == "s2c" and line["msg"].get("id") == lines[lists[0]]["msg"]["id"]
    )
    assert held not in {t["name"] for t in first["msg"]["result"]["tools"]}
    turn_at = next(i for i, line in enumerate(lines) if line.get("turn") == turn)
    notified = next(
        i
        for i, line in enumerate(lines)
        if line.get("msg", {}).get("method") == "notifications/tools/list_changed"
    )
    calls = [i for i in _sent(lines, "tools/call") if lines[i]["msg"]["params"]["name"] == held]
    relists = [i for i in lists if notified < i]
    assert turn_at < notified and relists and calls and relists[0] < calls[0]
    assert not [
        i for i in _sent(lines, "tools/call") if i < turn_at and lines[i]["msg"]["params"]["name"] == held
    ]
    assert result.success and result.list_changed_seen >= 1


def test_an_agent_that_never_re_lists_cannot_call_the_held_out_function() -> None:
    (_, (held, *_)), *_ = load(MISS_FUNC).held
    result, lines = _trace(MISS_FUNC, "reader")  # the reader's relist is "never"
    assert not [i for i in _sent(lines, "tools/call") if lines[i]["msg"]["params"]["name"] == held]
    assert len(_sent(lines, "tools/list")) == 1 + result.list_changed_seen  # the host's own re-list only
    _, relisting = _trace(MISS_FUNC, "reader", agent_params={"relist": "on_error"})
    assert [i for i in _sent(relisting, "tools/call") if relisting[i]["msg"]["params"]["name"] == held]


class _Idle(Agent):
    """Ends every turn at once, calling nothing."""

    name: ClassVar[str] = "idle"

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        pass

    def act(self, observation: Observation) -> Action:
        return Finish(text="done")


def test_success_is_bfcl_s_own_checker_s_verdict_on_what_reached_its_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, lines = _trace("bfcl/multi_turn_base/3", _Idle())
    (judged,) = [line for line in lines if line.get("judge") == "bfcl"]
    assert (
        not result.success
        and judged["error_type"].startswith("multi_turn:")
        and judged["turns"] == len(load("bfcl/multi_turn_base/3").turns)
    )
    assert result.judge == "bfcl"
    checker = __import__("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker", fromlist=["x"])
    seen: list[Any] = []

    def says_yes(decoded: Any, *args: Any) -> dict[str, Any]:
        seen.append(decoded)
        return {"valid": True}

    monkeypatch.setattr(checker, "multi_turn_checker", says_yes)
    monkeypatch.setattr(bfcl, "_VERDICTS", collections.OrderedDict())  # the checker asked anew
    result, _ = _trace("bfcl/multi_turn_base/3", _Idle())
    assert result.success and seen == [[[] for _ in load("bfcl/multi_turn_base/3").turns]]


def test_an_episode_that_stopped_before_the_last_turn_fails_as_bfcl_s_runner_fails_it() -> None:
    episode = bfcl.Episode("multi_turn_base", "0", "harness_test_forced")
    try:
        found = episode.verdict(turns_reached=1)
    finally:
        episode.close()
    assert found["valid"] is False and found["error_type"] == "multi_turn:force_terminated"


@pytest.mark.parametrize("strategy", ["is_error", "collapse"])
def test_under_raised_bfcl_s_own_failure_reaches_the_agent_as_the_strategy_says(strategy: str) -> None:
    # Under our rate limit the reader's repair re-runs ``cd ..``; BFCL's file system answers in its words.
    _, native = _trace("bfcl/multi_turn_base/0/upstream", "reader", strategy)
    _, raised = _trace("bfcl/multi_turn_base/0/raised", "reader", strategy)
    failing = [line["world_call"]["error"] for line in native if "error" in line.get("world_call", {})]
    assert failing  # the same faults (drawn alike for both conditions), the same first BFCL failure
    first = failing[0]
    answers = _answers(raised)
    as_native = [m for m in _answers(native) if first in _text(m)]
    assert as_native and not as_native[0]["result"].get("isError")  # native: an ordinary result
    if strategy == "is_error":
        assert [m for m in answers if m.get("result", {}).get("isError") and first in _text(m)]
    else:
        # -32603 on the wire; a typical host hands the agent its code alone (the reason is lost there)
        assert [m for m in answers if m.get("error", {}).get("code") == INTERNAL_ERROR and first in _text(m)]


def _answers(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["msg"] for line in lines if line.get("dir") == "s2c" and "id" in line["msg"]]


def _text(message: dict[str, Any]) -> str:
    """A tools/call answer's text: its content's, or its JSON-RPC error's message."""
    content = message.get("result", {}).get("content", [])
    return "".join(c.get("text", "") for c in content) + str(message.get("error", {}).get("message", ""))


def test_the_same_session_twice_gives_the_same_trace_and_sessions_of_a_task_share_no_world() -> None:
    for name in ("bfcl/multi_turn_long_context/4/raised", MISS_FUNC):
        first, _ = _trace(name, "reader", "collapse", 3)
        second, _ = _trace(name, "reader", "collapse", 3)
        assert first.trace_hash == second.trace_hash
    runs = [_trace("bfcl/multi_turn_base/1", "oracle")[0].success for _ in range(3)]
    assert runs == [True, True, True]


def test_conditions_carry_our_faults_but_native_and_draw_them_alike() -> None:
    base = "bfcl/multi_turn_base/8"
    drawn = {c: load(base if c == "native" else f"{base}/{c}").faults for c in CONDITIONS}
    assert drawn["native"] == () and drawn["raised"] == drawn["upstream"] and drawn["upstream"]


def test_a_fault_draw_is_one_configuration_for_both_conditions_and_the_study_holds_each() -> None:
    """``raised/<d>`` carries ``upstream/<d>``'s faults, drawn from that name (draw 0: no last
    part), and the study holds every task it takes under both conditions in every draw."""
    from harness.worlds.bfcl_scenario import study_names
    from harness.worlds.task import FAULT_DRAWS, draw_faults, with_draw

    study = study_names()
    tasks = sorted({"/".join(n.split("/")[:3]) for n in study})
    assert len(study) == len(tasks) * 2 * FAULT_DRAWS
    differ = 0
    for task in tasks[::10]:
        plan = bfcl.plan(*task.split("/")[1:])
        faults = []
        for d in range(FAULT_DRAWS):
            up, raised = (load(with_draw(f"{task}/{c}", d)) for c in ("upstream", "raised"))
            assert up.faults == raised.faults == draw_faults(with_draw(f"{task}/upstream", d), plan)
            assert up.task == raised.task == load(task).task
            faults.append(up.faults)
        differ += len(set(faults)) > 1
    assert differ > len(tasks[::10]) // 2


def test_a_batch_source_names_the_bfcl_version_and_another_is_refused() -> None:
    name = "bfcl/multi_turn_base/0/raised"
    source = world_source(name)
    assert load_source(source).name == name
    other = source.replace(bfcl.PINNED, "1999.1.1")
    with pytest.raises(Exception, match=r"1999\.1\.1"):
        load_source(other)


# -- the plan follower, and the agents' code --------------------------------------------------------


def test_the_plan_follower_satisfies_bfcl_s_checker_on_most_of_each_category_and_docs_name_every_miss(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["check", "bfcl", "--seeds", "1", "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(rows) >= 400
    docs = DOCS.read_text(encoding="utf-8")
    for category in bfcl.CATEGORIES:
        mine = [r for r in rows if r["scenario"].split("/")[1] == category]
        missed = [r["scenario"] for r in mine if r["status"] == "unsolvable"]
        assert len(missed) <= 0.1 * len(mine)
        for name in missed:
            assert f"`{name}`" in docs, f"{name} fails the plan follower and docs/worlds.md does not say why"
    assert code == (1 if any(r["status"] == "unsolvable" for r in rows) else 0)


def _string_literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_no_world_agent_holds_a_literal_of_bfcl_s_error_messages() -> None:
    known = bfcl.error_strings()
    assert len(known) > 20  # the census found BFCL's failure texts
    sources = [*sorted((ROOT / "scripted_agents").glob("*.py")), ROOT / "harness" / "reading.py"]
    sources = [p for p in sources if p.exists()] + sorted((ROOT / "harness" / "reading").glob("*.py"))
    for path in sources:
        mine = {s for s in _string_literals(path) if len(s) >= 8}
        words = {re.sub(r"\s+", " ", s).strip().lower() for s in mine}
        copied = [s for s in known if re.sub(r"\s+", " ", s).strip().lower() in words]
        assert not copied, f"{path.relative_to(ROOT)} holds BFCL's own failure text {copied[0]!r}"


def test_bfcl_census_counts_the_plans_and_says_none_of_their_calls_fail() -> None:
    found = {row["category"]: row for row in bfcl.census()}
    assert set(found) == set(bfcl.CATEGORIES)
    assert found["multi_turn_miss_func"]["held_functions"] >= found["multi_turn_miss_func"]["tasks"]
    for row in found.values():
        assert row["planned_calls"] > row["tasks"]
        assert row["plan_calls_failing"] >= 0


class _CallsOnce(Agent):
    """Calls one tool of the first turn's plan, then ends every turn."""

    name: ClassVar[str] = "once"

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        self.calls = [CallTool(g.options[0].tool, dict(g.options[0].arguments)) for g in task.subgoals][:1]

    def act(self, observation: Observation) -> Action:
        return self.calls.pop(0) if self.calls and isinstance(observation, Start) else Finish(text="ok")


def test_each_turn_starts_the_agent_afresh_on_that_turn_s_message_and_plan() -> None:
    sc = load("bfcl/multi_turn_base/0")
    agent = _CallsOnce()
    _, lines = _trace("bfcl/multi_turn_base/0", agent)
    made = [line["world_call"] for line in lines if "world_call" in line]
    expected = [
        sc.turn_task(t).subgoals[0].options[0] for t in range(len(sc.turns)) if sc.turn_task(t).subgoals
    ]
    assert [(c["function"], c["turn"]) for c in made] == [
        (o.tool, t)
        for t, o in zip([t for t in range(len(sc.turns)) if sc.turn_task(t).subgoals], expected, strict=True)
    ]


@pytest.mark.parametrize("agent", ["naive", "retry", "reader", "refresher", "blind", "oracle"])
def test_every_scripted_agent_ends_a_turn_that_asks_for_no_call_and_goes_on(agent: str) -> None:
    # multi_turn_miss_param's third turn leaves out a parameter: its ground truth is no call at all.
    sc = load("bfcl/multi_turn_miss_param/0")
    assert [t for t in range(len(sc.turns)) if not sc.turn_task(t).subgoals]
    result, lines = _trace("bfcl/multi_turn_miss_param/0", agent)
    assert result.status == "ok", result.error
    assert max(line.get("turn", 0) for line in lines) == len(sc.turns) - 1


def test_the_worlds_study_holds_both_families_and_without_bfcl_eval_refuses_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.worlds.scenario import study_names

    names = study_names()
    bfcl_names = [n for n in names if n.startswith("bfcl/")]
    assert bfcl_names and [n for n in names if n.startswith("agentdojo/")]
    assert {n.split("/")[1] for n in bfcl_names} == set(bfcl.CATEGORIES)
    assert {n.split("/")[3] for n in bfcl_names} == {"upstream", "raised"}
    monkeypatch.setattr(bfcl, "installed_version", lambda: None)
    code, _, err = cli(["run", "--study", "--worlds", "--dry-run"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and bfcl.INSTALL in err


def test_the_text_listing_shows_each_category_once_with_its_task_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["list"], capsys)
    assert code == 0
    for category in bfcl.CATEGORIES:
        assert f"bfcl/{category} " in out and f"bfcl/{category}/1 " not in out
    assert f"{len(bfcl.task_ids('multi_turn_base'))} tasks" in out


# -- the verdicts' memo beside BFCL's checker ------------------------------------------------------


def _row(result: Any) -> dict[str, Any]:
    row = dict(result.to_row())
    row.pop("wall_time_s")
    return row


def test_sessions_through_the_shortcuts_are_bfcl_s_own_paths_in_every_column_but_wall_time() -> None:
    # Each session twice through the shortcuts (the second a hit of the verdicts' memo), then on
    # BFCL's own paths (its runner for every call, its checker for every verdict).
    names = [
        f"bfcl/{c}/{i}/{cond}"
        for c in bfcl.CATEGORIES
        for i in bfcl.task_ids(c)[::50]
        for cond in ("raised", "upstream")
    ]
    hits = 0
    for name in names:
        for agent in ("naive", "reader", "refresher", "oracle"):
            for strategy, seed in (("is_error", 0), ("collapse", 0), ("is_error", 1)):
                before = len(bfcl._VERDICTS)
                first, first_lines = _trace(name, agent, strategy, seed)
                again, again_lines = _trace(name, agent, strategy, seed)
                hits += len(bfcl._VERDICTS) == before
                with bfcl.plain():
                    plain, plain_lines = _trace(name, agent, strategy, seed)
                assert _row(first) == _row(again) == _row(plain), (name, agent, strategy, seed)
                assert first_lines == again_lines == plain_lines
    assert hits > 0  # some sessions met a verdict already asked for


def test_a_memo_hit_gives_a_verdict_of_its_own() -> None:
    episode = bfcl.Episode("multi_turn_base", "0", "harness_test_memo")
    try:
        first = episode.verdict(len(episode.entry["ground_truth"]))
        first["valid"] = "changed by a caller"
        again = episode.verdict(len(episode.entry["ground_truth"]))
    finally:
        episode.close()
    assert again["valid"] is not first["valid"]


# -- the call shortcut beside BFCL's runner --------------------------------------------------------


def _both(
    category: str, task_id: str, calls: list[tuple[str, dict[str, Any]]]
) -> list[tuple[list[str], Any]]:
    """Each call's text and the world after them, through the shortcut and through the runner."""
    out = []
    for plain in (False, True):
        episode = bfcl.Episode(category, task_id, f"harness_test_call_{plain}")
        try:
            if plain:
                with bfcl.plain():
                    texts = [episode.run(f, a) for f, a in calls]
            else:
                texts = [episode.run(f, a) for f, a in calls]
            out.append((texts, episode.state()))
        finally:
            episode.close()
    return out


@pytest.mark.parametrize(
    ("function", "arguments"),
    [
        ("cd", {"folder": "document"}),
        ("cd", {"folder": "nowhere"}),  # BFCL's own failure, as a result
        ("cd", {"folder": 3}),  # a wrong type, as the method meets it
        ("cd", {"where": "document"}),  # an argument the method does not take
        ("mkdir", {"dir_name": "temp"}),
        ("ls", {"a": True}),
        ("echo", {"content": "x", "file_name": "n.txt"}),
        ("mean", {"numbers": [1.5, 2, 3]}),  # MathAPI: its answer a dict of a float
        ("mean", {"numbers": [float("inf")]}),  # no JSON value: the runner's path
        ("nope", {}),  # no method of any instance: the runner's path
    ],
)
def test_a_call_through_the_shortcut_gives_the_runner_s_text_and_leaves_the_same_world(
    function: str, arguments: dict[str, Any]
) -> None:
    (fast, fast_world), (plain, plain_world) = _both(
        "multi_turn_base", "15", [(function, arguments)]
    )  # files, math
    assert fast == plain and fast_world == plain_world


def test_every_served_function_through_the_shortcut_answers_as_through_the_runner() -> None:
    # Called bare, each function meets its own refusal (a missing argument, or the runner's own
    # refusal of a name it does not allow): the same words both ways.
    seen: set[str] = set()
    for category in bfcl.CATEGORIES:
        for task_id in bfcl.task_ids(category):
            classes = tuple(bfcl.entry(category, task_id)["involved_classes"])
            if set(classes) <= seen:
                continue
            seen.update(classes)
            calls = [(spec.name, {}) for spec in bfcl.tools(category, task_id).all()]
            (fast, fast_world), (plain, plain_world) = _both(category, task_id, calls)
            assert fast == plain and fast_world == plain_world, (category, task_id)
    assert len(seen) >= 8
