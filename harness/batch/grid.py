"""The grid of a batch: which sessions a run is made of, each named by its key.

A cell is one session: (scenario, agent, strategy, host, era, seed) plus the swept
parameter values (``--set faults.rate=0,0.1``). The grid is pure data; it is
written into the manifest so that ``--resume`` rebuilds exactly the same cells
and a comparison knows what was run. Cells come out in a fixed order, so the
same grid always gives the same list.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.errors import UserError, unknown_name
from harness.session.row import KEY_COLUMNS as KEY_COLUMNS  # defined with the row; kept importable here

_UNSAFE = re.compile(r"[^\w.=+,-]")
"""Characters kept out of a cell's file name (path separators, colons, spaces...)."""


@dataclass(frozen=True)
class Cell:
    """One session to run."""

    scenario: str
    agent: str
    strategy: str
    host: str
    seed: int
    params: tuple[tuple[str, float | int | str], ...] = ()
    era: str = "handshake"

    def key(self) -> tuple[Any, ...]:
        """The cell's values in :data:`KEY_COLUMNS` order, then the swept values."""
        return (
            self.scenario, self.agent, self.strategy, self.host, self.era, self.seed,
            *(v for _, v in self.params),
        )  # fmt: skip

    def label(self) -> str:
        """A file name for the cell (its trace, its errors.log entry): the key, joined by ``__``.

        A user's agent spec (``./agents.py:Mine``) may hold characters a file name cannot;
        they become ``_``, so shipped names and swept values read as they are.
        """
        extra = "".join(f"__{k}={v}" for k, v in self.params)
        era = "" if self.era == "handshake" else f"__{self.era}"  # handshake labels read as before
        text = f"{self.scenario}__{self.agent}__{self.strategy}__{self.host}{era}__{self.seed}{extra}"
        return _UNSAFE.sub("_", text)


class _Span(Mapping[int, int]):
    """The positions of consecutive seeds, computed: a dict of them would cost about 70 bytes
    a seed, which at a million-session grid is most of what the runner holds."""

    __slots__ = ("start", "stop")

    def __init__(self, start: int, stop: int) -> None:
        self.start, self.stop = start, stop

    def __getitem__(self, seed: int) -> int:
        if isinstance(seed, int) and self.start <= seed < self.stop:
            return seed - self.start
        raise KeyError(seed)

    def __len__(self) -> int:
        return self.stop - self.start

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.stop))


def _seed_positions(seeds: Sequence[int]) -> Mapping[int, int]:
    if isinstance(seeds, range):  # consecutive: Grid stores them so
        return _Span(seeds.start, seeds.stop)
    return {seed: i for i, seed in enumerate(seeds)}


Seeds = range | tuple[int, ...]
"""A grid's seeds: a ``range`` when they are consecutive (any number of them in 48 bytes),
else a tuple."""


def _compact_seeds(seeds: Iterable[int]) -> Seeds:
    if isinstance(seeds, range) and seeds.step == 1:
        return seeds
    values = seeds if isinstance(seeds, tuple | list) else tuple(seeds)  # no copy just to test them
    first = values[0] if values else 0
    if all(type(seed) is int and seed == first + i for i, seed in enumerate(values)):
        return range(first, first + len(values))
    return tuple(values)


@dataclass(frozen=True)
class Grid:
    """Everything a batch runs: the product of its axes."""

    scenarios: tuple[str, ...]
    agents: tuple[str, ...]
    strategies: tuple[str, ...]
    hosts: tuple[str, ...]
    seeds: Seeds
    """Consecutive seeds are kept as a ``range`` whatever form they are given in, so that a
    grid of a million sessions holds no tuple of a quarter of a million ints, and two grids
    with the same seeds compare equal."""
    sweeps: tuple[tuple[str, tuple[float | int | str, ...]], ...] = field(default=())
    eras: tuple[str, ...] = ("handshake",)
    """The protocol eras (``harness.session.simulated.ERAS``); an axis between hosts and the sweeps."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", _compact_seeds(self.seeds))

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.sweeps)

    def iter_cells(self) -> Iterator[Cell]:
        """Every cell, in grid order, without building the list (a grid may be millions)."""
        names = self.param_names
        # Seeds are the innermost axis and are iterated, not handed to product(), which would
        # build a tuple of every one of them out of a range.
        for sc, ag, st, ho, er, vals in itertools.product(
            self.scenarios,
            self.agents,
            self.strategies,
            self.hosts,
            self.eras,
            list(itertools.product(*(values for _, values in self.sweeps))),
        ):
            params = tuple(zip(names, vals, strict=True))
            for se in self.seeds:
                yield Cell(sc, ag, st, ho, se, params, er)

    def iter_blocks(self, seeds_per_block: int) -> Iterator[list[Cell]]:
        """Every cell once, in blocks of ``seeds_per_block`` consecutive seeds under every strategy.

        The sessions of one scenario, agent, host, era, swept values and seed share their
        fault-free baseline whatever their strategy (it runs under one fixed strategy), so a
        block holds all of them: a process that runs a block runs each baseline once, where
        runs of consecutive grid positions would hand the same seed's strategies to different
        workers, each running the baseline again. Within a block the cells are in grid order
        (strategy by strategy, each a run of consecutive positions).
        """
        names = self.param_names
        seeds = self.seeds
        step = max(1, seeds_per_block)
        for sc, ag, ho, er, vals in itertools.product(
            self.scenarios,
            self.agents,
            self.hosts,
            self.eras,
            list(itertools.product(*(values for _, values in self.sweeps))),
        ):
            params = tuple(zip(names, vals, strict=True))
            for start in range(0, len(seeds), step):
                block = seeds[start : start + step]
                yield [Cell(sc, ag, st, ho, se, params, er) for st in self.strategies for se in block]

    def cells(self) -> list[Cell]:
        return list(self.iter_cells())

    @functools.cached_property
    def _positions(self) -> tuple[Mapping[Any, int], ...]:
        sweep_values = list(itertools.product(*(values for _, values in self.sweeps)))
        axes = (self.scenarios, self.agents, self.strategies, self.hosts, self.eras, sweep_values)
        return (*({v: i for i, v in enumerate(axis)} for axis in axes), _seed_positions(self.seeds))

    def index(self, cell: Cell) -> int:
        """The cell's position in :meth:`iter_cells` order, computed, not searched."""
        values = (
            cell.scenario,
            cell.agent,
            cell.strategy,
            cell.host,
            cell.era,
            tuple(v for _, v in cell.params),
            cell.seed,
        )
        index = 0
        for pos, value in zip(self._positions, values, strict=True):
            index = index * len(pos) + pos[value]
        return index

    def __len__(self) -> int:
        n = len(self.scenarios) * len(self.agents) * len(self.strategies) * len(self.hosts) * len(self.seeds)
        n *= len(self.eras)
        for _, values in self.sweeps:
            n *= len(values)
        return n

    def to_json(self) -> dict[str, Any]:
        """The manifest's form: consecutive seeds as ``{"start": a, "stop": b}``, others as a list."""
        data = asdict(self)
        seeds = self.seeds
        data["seeds"] = (
            {"start": seeds.start, "stop": seeds.stop} if isinstance(seeds, range) else list(seeds)
        )
        data["sweeps"] = {name: list(values) for name, values in self.sweeps}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Grid:
        """The grid a manifest records, each key of the shape :meth:`to_json` writes; anything
        else (a key missing, a string where a list of names goes) is a UserError naming it."""
        try:
            if not isinstance(data, dict):
                raise TypeError(f"an object expected, not {type(data).__name__}")
            names = {key: _names(key, data[key]) for key in ("scenarios", "agents", "strategies", "hosts")}
            sweeps = data.get("sweeps", {})
            if not isinstance(sweeps, dict):
                raise TypeError(f"sweeps: an object expected, not {type(sweeps).__name__}")
            return cls(
                **names,
                seeds=_seeds_from_json(data["seeds"]),
                sweeps=tuple((str(k), _swept(str(k), v)) for k, v in sweeps.items()),
                eras=_names("eras", data.get("eras", ["handshake"])),  # a manifest from before eras
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"manifest.json: grid: unreadable ({exc})") from None


def _names(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{key}: a list of names expected, not {value!r:.60}")
    return tuple(value)


def _swept(key: str, value: Any) -> tuple[Any, ...]:
    plain = (int, float, str)
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, plain) and not isinstance(v, bool) for v in value
    ):
        raise TypeError(f"sweeps: {key}: a list of numbers or strings expected, not {value!r:.60}")
    return tuple(value)


def _seeds_from_json(data: Any) -> Seeds:
    # harness-results/1 wrote every seed; /2 writes consecutive ones as a span.
    if isinstance(data, dict):
        start, stop = data["start"], data["stop"]
        if type(start) is not int or type(stop) is not int or not 0 <= start <= stop:
            raise ValueError(f"seeds span {data!r} is not 0 <= start <= stop in integers")
        return range(start, stop)
    if not isinstance(data, list | tuple):
        raise TypeError(f"seeds must be a list or a {{start, stop}} span, not {type(data).__name__}")
    if not all(type(s) is int and s >= 0 for s in data):
        raise TypeError(f"seeds: a list of seeds (integers from 0) expected, not {data!r:.60}")
    return _compact_seeds(iter(data))


def parse_number(text: str) -> float | int | str:
    """A swept value: int if it looks like one, else float, else the string itself."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_sets(items: Iterable[str]) -> tuple[tuple[str, tuple[float | int | str, ...]], ...]:
    """Parse ``--set key=v1,v2`` options into sweep axes."""
    sweeps: dict[str, tuple[float | int | str, ...]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise UserError(f"--set {item!r}: expected KEY=V1[,V2,...], e.g. faults.rate=0,0.1,0.2")
        if key in sweeps:
            raise UserError(f"--set {key}: given twice")
        parsed = tuple(dict.fromkeys(parse_number(v.strip()) for v in values.split(",") if v.strip()))
        sweeps[key] = parsed
    return tuple(sweeps.items())


def split_names(values: Sequence[str]) -> tuple[str, ...]:
    """Accept both ``--agents a b`` style repeats and ``--agents a,b``."""
    out: list[str] = []
    for v in values:
        out.extend(part.strip() for part in v.split(",") if part.strip())
    return tuple(dict.fromkeys(out))


def given_names(values: Sequence[str], what: str) -> tuple[str, ...]:
    """The names given (``a,b`` or repeated); a value that names nothing (``""``, ``","``) is
    refused rather than read as "not given", which would run every one."""
    names = split_names(tuple(values))
    if values and not names:
        raise UserError(
            f"{what}: {values[0]!r} names nothing; leave {what} out to run every one, or name some"
        )
    return names


@dataclass(frozen=True)
class Axes:
    """A grid's axes but its scenarios, named on the command line and checked: every name known."""

    agents: tuple[str, ...]
    strategies: tuple[str, ...]
    hosts: tuple[str, ...]
    eras: tuple[str, ...]
    seeds: range

    @classmethod
    def named(
        cls,
        agents: Sequence[str],
        strategies: Sequence[str],
        hosts: Sequence[str],
        eras: Sequence[str],
        seeds: int,
    ) -> Axes:
        """The axes the flags name, each defaulted when left out (every agent that needs no model
        endpoint, every strategy, the typical host, the handshake era); UserError for a name that
        is not one, naming the valid ones."""
        from harness.protocol import STRATEGIES
        from harness.session.host import HOSTS
        from harness.session.registry import agent_class, list_agents
        from harness.session.simulated import ERAS

        agent_names = given_names(agents, "--agents") or tuple(
            a for a in list_agents() if not getattr(agent_class(a), "calls_a_model", False)
        )
        for a in agent_names:
            agent_class(a)  # a UserError naming what is wrong, before anything runs
        checked: list[tuple[str, ...]] = []
        for values, flag, what, valid, default in (
            (strategies, "--strategies", "strategy", STRATEGIES, STRATEGIES),
            (hosts, "--hosts", "host", tuple(HOSTS), ("typical",)),
            (eras, "--eras", "era", tuple(ERAS), ("handshake",)),
        ):
            names = given_names(values, flag) or tuple(default)
            for name in names:
                if name not in valid:
                    raise unknown_name(what, name, valid)
            checked.append(names)
        if seeds < 1:
            raise UserError("--seeds must be at least 1")
        return cls(agent_names, checked[0], checked[1], checked[2], range(seeds))
