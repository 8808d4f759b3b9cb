"""Finding agents by name: the one registry for shipped agents and users' own.

An agent spec is one of

* a registered name: an entry point in the group ``harness.agents``
  (``scripted_agents`` registers its five in ``pyproject.toml``; a user's package
  registers its own the same way);
* ``module:Class``: an importable module (the working directory is tried too, as
  ``uvicorn main:app`` does, so ``mypkg.agents:Stubborn`` works from a checkout);
* ``path/to/file.py:Class``: a Python file, loaded by path.

The spec as given is the agent's name in results (the ``agent`` column), so a batch
can hand it to a worker process, which resolves it again. A spec that cannot be
resolved is a :class:`~harness.errors.UserError` that says why, before anything runs.
An agent's random draws are seeded from :func:`seed_name`, the spec without the folder
of a file it names, so a checkout elsewhere (or a relative path) draws the same.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.errors import UserError, unknown_name
from harness.session.agent import AGENT_PARAM_PREFIX, Agent

AGENT_GROUP = "harness.agents"
"""The entry point group agents are registered under."""

__all__ = [
    "AGENT_GROUP",
    "AgentSpecError",
    "agent_class",
    "check_agent_params",
    "list_agents",
    "make_agent",
    "seed_name",
    "split_agent_params",
]


class AgentSpecError(UserError):
    """An agent spec names nothing that can be loaded; the message says why."""


@functools.cache
def _entry_points() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=AGENT_GROUP)}


def list_agents() -> list[str]:
    """The registered agent names, sorted (users' agents given by path are not listed)."""
    return sorted(_entry_points())


def _check(cls: object, spec: str) -> type[Agent]:
    if not (inspect.isclass(cls) and issubclass(cls, Agent)):
        raise AgentSpecError(
            f"agent {spec!r}: {cls!r} is not a subclass of harness.session.agent.Agent "
            "(see docs/agents.md for the interface)"
        )
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise AgentSpecError(f"agent {spec!r}: {cls.__name__} does not implement {missing}")
    return cls


def _attribute(module: object, attr: str, spec: str, where: str) -> type[Agent]:
    cls = getattr(module, attr, None)
    if cls is None:
        raise AgentSpecError(f"agent {spec!r}: {where} has no attribute {attr!r}")
    return _check(cls, spec)


def _from_file(spec: str, path_text: str, attr: str) -> type[Agent]:
    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise AgentSpecError(f"agent {spec!r}: no such file {path_text}")
    # One module name per file, stable across processes, so a worker loading the same file
    # gets the same name (and pickled observations of its classes resolve).
    name = "harness_user_agent_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    module = sys.modules.get(name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise AgentSpecError(f"agent {spec!r}: {path_text} cannot be loaded as Python")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise AgentSpecError(
                f"agent {spec!r}: {path_text} failed to load: {type(exc).__name__}: {exc}"
            ) from None
    return _attribute(module, attr, spec, path_text)


def _from_module(spec: str, module_name: str, attr: str) -> type[Agent]:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name) or os.getcwd() in sys.path:
            raise AgentSpecError(f"agent {spec!r}: importing {module_name} failed: {exc}") from None
        sys.path.insert(0, os.getcwd())  # as `python -m` would have; workers inherit sys.path
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as again:
            raise AgentSpecError(
                f"agent {spec!r}: no module named {again.name!r} (looked on sys.path and in {os.getcwd()})"
            ) from None
    except Exception as exc:
        raise AgentSpecError(
            f"agent {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None
    return _attribute(module, attr, spec, module_name)


@functools.cache
def agent_class(spec: str) -> type[Agent]:
    """The class an agent spec names; an unresolvable spec raises :class:`AgentSpecError`."""
    if ":" not in spec:
        ep = _entry_points().get(spec)
        if ep is None:
            raise unknown_name("agent", spec, list_agents())
        try:
            loaded = ep.load()
        except Exception as exc:
            raise AgentSpecError(
                f"agent {spec!r}: its entry point {ep.value} failed to load: {type(exc).__name__}: {exc}"
            ) from None
        return _check(loaded, spec)
    target, _, attr = spec.rpartition(":")
    if not target or not attr.isidentifier():
        raise AgentSpecError(f"agent {spec!r}: expected NAME, module:Class or path/to/file.py:Class")
    if _names_a_file(target):
        return _from_file(spec, target, attr)
    return _from_module(spec, target, attr)


def seed_name(spec: str) -> str:
    """What an agent's seed is drawn from: ``spec``, but ``file.py:Class`` for a file given by path.

    The folder a file lies in says where a checkout is, not which agent it is: with the path
    in the seed, the same agent file drew different numbers in another clone (or given as
    ``./file.py``), and a run's trace depended on where it was run."""
    target, colon, attr = spec.rpartition(":")
    return f"{Path(target).name}:{attr}" if colon and _names_a_file(target) else spec


def _names_a_file(target: str) -> bool:
    """Whether the part of a spec before ``:`` is a file path (else a module name)."""
    return target.endswith(".py") or os.sep in target or "/" in target


def make_agent(spec: str, params: Mapping[str, Any] | None = None) -> Agent:
    """A fresh agent for a spec (a registered name, ``module:Class`` or ``file.py:Class``),
    configured with ``params`` (knob -> value, see :meth:`Agent.configure`) if any are given."""
    cls = agent_class(spec)
    try:
        agent = cls()
    except Exception as exc:
        raise AgentSpecError(
            f"agent {spec!r}: {cls.__name__}() failed: {type(exc).__name__}: {exc}"
        ) from None
    if params:
        configure(agent, spec, params)
    return agent


def configure(agent: Agent, spec: str, params: Mapping[str, Any]) -> None:
    """``agent.configure(params)``; anything but a UserError it raises becomes one naming ``spec``."""
    try:
        agent.configure(params)
    except UserError:
        raise
    except Exception as exc:
        raise AgentSpecError(
            f"agent {spec!r}: configure({dict(params)!r}) failed: {type(exc).__name__}: {exc}"
        ) from None


def split_agent_params(
    params: Mapping[str, Any] | tuple[tuple[str, Any], ...],
) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    """A cell's swept parameters split into the agent's knobs (``agent.<knob>``, prefix dropped)
    and the rest (scenario overrides, in their order)."""
    items = params.items() if isinstance(params, Mapping) else params
    knobs: dict[str, Any] = {}
    rest: list[tuple[str, Any]] = []
    for key, value in items:
        if key.startswith(AGENT_PARAM_PREFIX):
            knobs[key[len(AGENT_PARAM_PREFIX) :]] = value
        else:
            rest.append((key, value))
    return knobs, tuple(rest)


def check_agent_params(spec: str, params: Mapping[str, Any]) -> None:
    """Refuse, before anything runs, knobs the agent ``spec`` does not take or values it does not
    accept: a :class:`~harness.errors.UserError` of one line naming the agent and the knob.

    ``params`` maps knobs to values, named either way (``backoff`` or ``agent.backoff``).
    ``harness run`` calls it for every agent of the grid and every value of an ``agent.*`` sweep.
    """
    knobs = {k.removeprefix(AGENT_PARAM_PREFIX): v for k, v in params.items()}
    if knobs:
        make_agent(spec, knobs)
