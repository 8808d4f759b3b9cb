"""Wire codecs: how a message dict becomes bytes and back.

Every codec is a pair of pure functions. ``json`` (stdlib) is the default and
the reference's; ``orjson`` and ``msgspec`` are faster drop-ins, used when
installed. All three produce compact JSON and preserve key order, so traces are
byte-identical for identical inputs with a given codec.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Encoder = Callable[[Any], bytes]
Decoder = Callable[[bytes | str], Any]


@dataclass(frozen=True)
class Codec:
    """A named encode/decode pair."""

    name: str
    encode: Encoder
    decode: Decoder


def _json_codec() -> Codec:
    dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode  # NaN is not JSON

    def encode(obj: Any) -> bytes:
        return dumps(obj).encode()

    return Codec("json", encode, json.loads)


def _orjson_codec() -> Codec:
    import orjson

    return Codec("orjson", orjson.dumps, orjson.loads)


def _msgspec_codec() -> Codec:
    import msgspec

    return Codec("msgspec", msgspec.json.encode, msgspec.json.decode)


_FACTORIES: dict[str, Callable[[], Codec]] = {
    "json": _json_codec,
    "orjson": _orjson_codec,
    "msgspec": _msgspec_codec,
}
CODECS: tuple[str, ...] = tuple(_FACTORIES)
_cache: dict[str, Codec] = {}


def get_codec(name: str) -> Codec:
    """The codec called ``name``; ValueError if unknown, ImportError if not installed."""
    codec = _cache.get(name)
    if codec is None:
        factory = _FACTORIES.get(name)
        if factory is None:
            raise ValueError(f"unknown codec {name!r}; one of {', '.join(CODECS)}")
        codec = _cache[name] = factory()
    return codec


def available_codecs() -> tuple[str, ...]:
    """The codecs whose library is importable here."""
    names = []
    for name in CODECS:
        try:
            get_codec(name)
        except ImportError:
            continue
        names.append(name)
    return tuple(names)
