"""Wire codecs: how a message dict becomes bytes and back.

Every codec is a pair of pure functions. ``json`` (stdlib) is the default and
the reference's; ``orjson`` and ``msgspec`` are faster drop-ins, used when
installed. All three produce compact JSON and preserve key order, so traces are
byte-identical for identical inputs with a given codec.
"""

from __future__ import annotations

import json
import json.scanner
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
    encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False)  # NaN is not JSON
    dumps, loads, default = encoder.encode, json.loads, encoder.default
    make_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without _json
    ascii_string = json.encoder.encode_basestring_ascii
    decode_text = json.JSONDecoder().decode
    make_scanner: Any = json.scanner.make_scanner  # typeshed types it as a class of itself
    scan_once = make_scanner(json.JSONDecoder())

    def encode(obj: Any) -> bytes:
        # What encoder.encode does for a non-str without its Python frames: the C encoder
        # with the same arguments and fresh circular-reference markers. Same bytes.
        if make_c_encoder is None or isinstance(obj, str):
            return dumps(obj).encode()
        c_encode = make_c_encoder({}, default, ascii_string, None, ":", ",", False, False, False)
        return "".join(c_encode(obj, 0)).encode()

    def decode(data: bytes | str) -> Any:
        # json.loads detects the encoding of bytes; bytes that open with "{" and a non-NUL
        # byte are UTF-8 to it, so decode them as it would, skip the detection, and scan
        # the text directly. Anything but one whole object (trailing space, extra data, an
        # error) goes to JSONDecoder.decode, which answers or raises as json.loads would.
        if type(data) is bytes and len(data) > 1 and data[0] == 0x7B and data[1]:
            text = data.decode("utf-8", "surrogatepass")
            try:
                value, end = scan_once(text, 0)
            except (StopIteration, ValueError):
                return decode_text(text)
            return value if end == len(text) else decode_text(text)
        return loads(data)

    return Codec("json", encode, decode)


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


_TEXT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_make_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without _json
_utf8_string = json.encoder.encode_basestring


def compact_text(obj: Any) -> str:
    """``obj`` as compact JSON text with its characters as they are (not ``\\u`` escapes).

    The same string as ``json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode``
    (NaN written as ``NaN``, a circular reference refused), without that method's Python frames
    and the encoder it builds on every call: the session trace writes every record with it and
    the simulated tools every result.
    """
    if _make_c_encoder is None or isinstance(obj, str):
        return _TEXT.encode(obj)
    c_encode = _make_c_encoder({}, _TEXT.default, _utf8_string, None, ":", ",", False, False, True)
    return "".join(c_encode(obj, 0))
