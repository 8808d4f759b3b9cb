"""``refresher``: a reader that also keeps its tool list current."""

from __future__ import annotations

from harness.sim.agent import Action, ListTools
from scripted_agents.reader import ReaderAgent


class RefresherAgent(ReaderAgent):
    """Re-lists on ``notifications/tools/list_changed`` and, once per option, when a tool seems
    gone (-32601), forbidden (-32600) or changed (its arguments no longer fit); adopts new tools
    as alternatives and refits its arguments to a changed schema.
    """

    name = "refresher"
    summary = "Reader that re-lists tools on list_changed (or a tool-shape error) and adopts changes."
    relists = True

    def _relist_once(self) -> Action | None:
        if self.relisted:
            return None
        self.relisted = True
        self.deferred = None
        return ListTools()

    def on_schema_error(self) -> Action:
        return self._relist_once() or self.guess()

    def tool_unusable(self) -> Action:
        return self._relist_once() or self.switch("tool not callable")

    def stuck(self, why: str) -> Action:
        return self._relist_once() or super().stuck(why)
