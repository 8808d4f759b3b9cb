"""The MRTR ``requestState``: what a stateless server remembers of a call, carried by the client.

The spec (SEP-2322) makes the echoed state attacker-controlled input: a server
must protect its integrity and refuse state that fails verification. Here:

* The token is ``s1.<payload>.<mac>``: base64url JSON and its HMAC-SHA256 under a
  per-server key (``secrets.token_bytes(32)`` unless one is given, for tests and
  deterministic traces). It is signed, not encrypted: the client may read it.
* The payload binds the call: the method, the tool name, a digest of the
  arguments, and the digest of every question asked; it carries the answers
  already received (so later rounds need not ask again) and a nonce.
* A nonce is good once. The sealer keeps the nonces it issued and has not seen
  back (at most ``max_outstanding``, oldest forgotten first); opening a state
  consumes its nonce, so a replayed state is refused. Nonces count up, so the
  same key and the same calls give the same tokens (byte-identical traces).

Refusal of any kind (tampered, another server's key, another call, replayed,
forgotten) is one -32602 with the same message and ``data``; the tool does not
run. Nothing here knows the server: it is a pure function of key and counter.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from harness.protocol.errors import InvalidParams
from harness.protocol.inputs import Answer, json_digest

STATE_VERSION = "s1"
DEFAULT_MAX_OUTSTANDING = 4096
"""Issued states a server remembers; the oldest unanswered one is forgotten past this."""

REFUSAL = "invalid or already used requestState"
REFUSAL_DATA = {"reason": "invalid_request_state"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def arguments_digest(arguments: dict[str, Any]) -> str:
    """A digest of a call's arguments, independent of key order."""
    return json_digest(arguments)


@dataclass(frozen=True)
class OpenedState:
    """A verified state: the answers it carries and the digests of the questions it asked."""

    asked: dict[str, str]
    answers: dict[str, Answer]


def _refuse() -> InvalidParams:
    return InvalidParams(REFUSAL, dict(REFUSAL_DATA))


class RequestStateSealer:
    """Seal and open ``requestState`` tokens under one key; shared by a server and its sessions."""

    def __init__(self, key: bytes | None = None, *, max_outstanding: int = DEFAULT_MAX_OUTSTANDING) -> None:
        if key is not None and len(key) < 16:
            raise ValueError("a requestState key needs at least 16 bytes")
        if max_outstanding < 1:
            raise ValueError("max_outstanding must be a positive integer")
        self._key = key if key is not None else secrets.token_bytes(32)
        self.max_outstanding = max_outstanding
        self._outstanding: OrderedDict[int, None] = OrderedDict()
        self._counter = 0

    @property
    def outstanding(self) -> int:
        """Issued states not yet seen back."""
        return len(self._outstanding)

    def _mac(self, signed: bytes) -> bytes:
        return hmac.new(self._key, signed, hashlib.sha256).digest()

    def seal(
        self,
        method: str,
        name: str,
        arguments: dict[str, Any],
        asked: dict[str, str],
        answers: dict[str, Answer],
    ) -> str:
        """A token for a call that asked ``asked`` (key -> question digest), carrying ``answers``."""
        self._counter += 1
        nonce = self._counter
        self._outstanding[nonce] = None
        if len(self._outstanding) > self.max_outstanding:
            self._outstanding.popitem(last=False)
        payload = {
            "m": method,
            "t": name,
            "a": arguments_digest(arguments),
            "q": asked,
            "r": {k: {"q": a.digest, "r": a.result} for k, a in answers.items() if a.result is not None},
            "n": nonce,
        }
        body = _b64(json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode())
        signed = f"{STATE_VERSION}.{body}"
        return f"{signed}.{_b64(self._mac(signed.encode()))}"

    def open(self, token: object, method: str, name: str, arguments: dict[str, Any]) -> OpenedState:
        """Verify ``token`` for this call and consume it; -32602 (the tool must not run) if it fails."""
        if not isinstance(token, str):
            raise _refuse()
        version, _, rest = token.partition(".")
        body, _, mac = rest.partition(".")
        if version != STATE_VERSION or not body or not mac:
            raise _refuse()
        try:
            expected = self._mac(f"{version}.{body}".encode())
            if not hmac.compare_digest(_unb64(mac), expected):
                raise _refuse()
            payload = json.loads(_unb64(body))
        except (binascii.Error, ValueError, UnicodeError):
            raise _refuse() from None
        if not isinstance(payload, dict):
            raise _refuse()
        nonce = payload.get("n")
        if (
            payload.get("m") != method
            or payload.get("t") != name
            or payload.get("a") != arguments_digest(arguments)
            or type(nonce) is not int
            or nonce not in self._outstanding
        ):
            raise _refuse()
        asked, carried = payload.get("q"), payload.get("r")
        if not isinstance(asked, dict) or not isinstance(carried, dict):
            raise _refuse()
        del self._outstanding[nonce]
        answers = {k: Answer(v["q"], v["r"]) for k, v in carried.items()}
        return OpenedState(asked, answers)
