"""``refresher``: a reader that also keeps its tool list current."""

from __future__ import annotations

from scripted_agents.reader import ReaderAgent


class RefresherAgent(ReaderAgent):
    """Re-lists on ``notifications/tools/list_changed`` and, once per option, when a tool seems
    gone (-32601), forbidden (-32600) or changed (its arguments no longer fit), or when it has
    nothing left to try; adopts new tools as alternatives and refits its arguments to a changed
    schema. That is the reader with ``relist="on_error"`` (:meth:`ScriptedAgent._relist_once`).
    """

    name = "refresher"
    summary = "Reader that re-lists tools on list_changed (or a tool-shape error) and adopts changes."
    relist = "on_error"
