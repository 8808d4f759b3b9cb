"""The world's shortcuts against the plain path they skip (``harness.worlds.agentdojo.plain``):
a task's pre-environment built once per process and loaded from its pickle, the judge reading a
post-environment that shares the unchanged parts of ``pre``, and libyaml's emitter for a tool's
result. Each must leave every session's row and trace as the plain path makes them."""

from __future__ import annotations

import pickle

import pytest
from pydantic import BaseModel

from harness.bench import worlds_fingerprint
from harness.worlds import agentdojo
from harness.worlds.scenario import list_world_scenarios


class Part(BaseModel):
    value: int | float
    items: dict[str, int | float]


def _every_task() -> list[tuple[str, str]]:
    return [(n.split("/")[1], n.split("/")[2]) for n in list_world_scenarios()]


def test_a_remembered_result_is_said_as_agentdojo_says_it() -> None:
    """Every planned call of every task, its result put in words both ways: the same text."""
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

    fast, slow = agentdojo._yaml_dump(plain=False), agentdojo._yaml_dump(plain=True)
    compared = 0
    for suite, task_id in _every_task():
        with agentdojo.plain():
            episode = agentdojo.Episode(suite, task_id)
        for function, args in agentdojo.plan(suite, task_id).calls:
            result, error = episode.runtime.run_function(episode.env, function, dict(args))
            if error is None:
                assert tool_result_to_str(result, dump_fn=fast) == tool_result_to_str(result, dump_fn=slow)
                compared += 1
    assert compared > 100


def test_a_snapshot_is_the_plain_pre_environment() -> None:
    for suite, task_id in _every_task()[::7]:
        with agentdojo.plain():
            plain = agentdojo.Episode(suite, task_id)
        fast = agentdojo.Episode(suite, task_id)
        assert fast.env == plain.env and fast.pre == plain.pre
        assert fast.env is not fast.pre


def test_sessions_leave_the_shared_pre_environment_as_it_was() -> None:
    """``pre`` is one object for every session of a task: neither a call, nor the judge, nor the
    parts the post-environment shares with it may change it."""
    from harness.worlds.injections import INJECTIONS
    from harness.worlds.injections import draw as draw_injection

    names = worlds_fingerprint.sample(per=1)
    hits = agentdojo._snapshot.cache_info().hits
    list(worlds_fingerprint.rows(names, seeds=1))
    assert agentdojo._snapshot.cache_info().hits > hits  # sessions did share a snapshot
    for name in names:
        _, suite, task_id, *condition = name.split("/")
        injected = set(condition) & set(INJECTIONS)
        made = draw_injection(name, suite, task_id, condition[0]) if injected else None
        vectors = made.vectors if made is not None else ()
        snap = agentdojo._snapshot(suite, task_id, vectors)
        fresh = agentdojo._prepared(suite, task_id, vectors)
        assert snap.pre == fresh and snap.pre.model_dump() == fresh.model_dump()
        assert pickle.loads(snap.blob).model_dump() == fresh.model_dump()
        assert {n: pickle.loads(b) for n, b in snap.parts.items()} == dict(fresh)


@pytest.mark.parametrize("per", [1])
def test_the_rows_are_the_plain_paths_in_every_column_but_wall_time(per: int) -> None:
    """Every suite under every condition, every scripted agent under every strategy: the rows
    (``trace_hash`` among them, so the traces too) equal the plain path's."""
    names = worlds_fingerprint.sample(per=per)
    conditions = {n.split("/")[3] if n.count("/") == 3 else "" for n in names}
    assert len(conditions) > 3 and {n.split("/")[1] for n in names} == set(agentdojo.suites())
    plain = list(worlds_fingerprint.rows(names, seeds=1, plain=True))
    fast = list(worlds_fingerprint.rows(names, seeds=1))
    assert len(fast) == len(plain) > 100
    for a, b in zip(fast, plain, strict=True):
        assert a == b


def test_a_post_environment_sharing_pre_s_parts_diffs_as_its_own_copy() -> None:
    """Every task's plan run on its world, then its post-environment shares ``pre``'s equal parts
    at every depth (:func:`harness.worlds.agentdojo._shared`, ``pre``'s pickles remembered): it is
    still equal to an unshared
    copy, shares at least one part below the top with ``pre``, and DeepDiff (what AgentDojo's
    judges read) says the same of both."""
    from deepdiff import DeepDiff

    deep = 0
    for suite, task_id in _every_task()[::3]:
        episode = agentdojo.Episode(suite, task_id)
        for function, args in agentdojo.plan(suite, task_id).calls:
            episode.runtime.run_function(episode.env, function, dict(args))
        own = episode.env.model_copy(deep=True)
        shared = agentdojo._shared(
            episode.env, episode.pre, agentdojo._pre_pickled
        )  # ``pre``: the snapshot's
        assert shared == own
        assert DeepDiff(episode.pre, shared) == DeepDiff(episode.pre, own)
        for name in type(shared).model_fields:
            part, before = getattr(shared, name), getattr(episode.pre, name)
            if part is not before and any(getattr(part, f) is getattr(before, f)
                                          for f in getattr(type(part), "model_fields", ())):  # fmt: skip
                deep += 1
    assert deep > 0


def test_a_part_equal_in_value_but_not_in_type_is_not_shared() -> None:
    """``1 == 1.0``, but a diff reports the type change: only an equal pickle shares a part."""
    before = Part(value=1, items={"a": 1, "b": 2})
    after = agentdojo._shared(Part(value=1.0, items={"a": 1.0, "b": 2}), before)
    assert type(after.value) is float and type(after.items["a"]) is float
    assert after.items is not before.items
    same = Part(value=1, items={"a": 1, "b": 2})
    assert agentdojo._shared(same, before) is before


def test_a_session_owns_only_the_parts_its_calls_reach_and_the_rest_stays_pre_s() -> None:
    """A workspace session that reads the calendar loads its own calendar and shares the inbox
    and the drive with ``pre``; ``env`` read from outside the session is every part its own."""
    episode = agentdojo.Episode("workspace", "user_task_0")
    function, args = agentdojo.plan("workspace", "user_task_0").calls[0]
    needs = agentdojo._needs("workspace")[function]
    assert needs
    episode.run(function, args)
    for name in type(episode.pre).model_fields:
        assert (getattr(episode._env, name) is getattr(episode.pre, name)) == (name not in needs), name
    env = episode.env
    assert all(getattr(env, n) is not getattr(episode.pre, n) for n in type(env).model_fields)
    assert env == episode.pre  # a read changes nothing


def test_a_verdict_is_remembered_only_for_the_same_world_output_and_calls() -> None:
    """The judge's memo answers a second session that ended alike, and decides afresh for one
    whose world differs: the remembered verdict is never another world's."""
    suite, task_id = "banking", "user_task_0"
    plan = agentdojo.plan(suite, task_id)
    agentdojo._verdicts.clear()
    verdicts = []
    for run in (True, True, False):
        episode = agentdojo.Episode(suite, task_id)
        if run:
            for function, args in plan.calls:
                episode.run(function, args)
        verdicts.append(episode.utility(plan.output))
    with agentdojo.plain():
        plain = agentdojo.Episode(suite, task_id)
    for function, args in plan.calls:
        plain.run(function, args)
    assert verdicts[0] == verdicts[1] == plain.utility(plan.output) is True
    assert verdicts[2] is False and len(agentdojo._verdicts) == 2
