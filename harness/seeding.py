"""Seeds: one integer per session, split into independent streams by a stable hash.

Every random choice in a session (which calls a fault rule hits, how long a
guessing agent waits) flows from a :class:`numpy.random.Generator` built here,
Gymnasium style: ``np_random(seed)`` wraps a ``SeedSequence``. Seeds for the
streams are derived with sha256 of their parts (as tau-bench derives per-task
seeds), never with Python's ``hash()``, which is salted per process and would
make a batch run on two workers disagree with a serial one.
"""

from __future__ import annotations

import hashlib

import numpy as np

SEED_BITS = 63
"""Derived seeds fit in a signed 64-bit integer (a parquet column, a JSON number)."""


def derive_seed(*parts: object) -> int:
    """A seed from ``parts``: sha256 over their ``repr``s, separated, first 8 bytes.

    ``derive_seed("faults", "flaky_weather", "reader", 3)`` is the same number in
    every process, on every machine, forever. Parts are ``repr``'d so that
    ``1`` and ``"1"`` differ.
    """
    digest = hashlib.sha256("\x1f".join(repr(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def np_random(seed: int) -> np.random.Generator:
    """A PCG64 generator seeded through a ``SeedSequence`` (what Gymnasium's ``np_random`` does)."""
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
