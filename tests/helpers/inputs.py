"""``Confirmer``: an input handler that answers every elicitation with accept and records it."""

from __future__ import annotations

from typing import Any


class Confirmer:
    """An input handler that confirms (or refuses) every elicitation and records what it was asked."""

    def __init__(self, confirm: bool = True) -> None:
        self.confirm = confirm
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((method, params))
        return {"action": "accept", "content": {"confirm": self.confirm}}
