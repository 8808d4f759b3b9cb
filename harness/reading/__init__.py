"""Reading tool error texts: what went wrong, which argument, what is valid, when to retry.

A reader that never saw the harness's own fault templates: it knows how real servers and the
libraries under them word their errors (zod, pydantic, jsonschema, Node's errno codes, HTTP
clients, Go's wrapping, cloud SDKs, gRPC status codes), and it is measured against the
hand-annotated corpus of real MCP servers' errors and the library texts of upstream failures
(``docs/corpus.md``, ``docs/reading.md``). It imports only the standard library.

The public API::

    read(text, *, arguments=None, tools=None) -> Reading
    read_memo(...)  # read, remembered per process (what agents call: the same texts recur)
    Reading(category, argument, expected, retry_after_s, actionable, instruction)
    Instruction(tool, arguments)
    CATEGORIES

and, to measure it against annotated texts, ``evaluate(records)`` -> ``Evaluation`` (with
``same_expected`` and ``agrees``, the field comparisons it uses).
"""

from harness.reading._evaluate import FIELDS, Evaluation, FieldScore, agrees, evaluate, same_expected
from harness.reading._model import CATEGORIES, Instruction, Reading
from harness.reading._reader import read, read_memo

__all__ = [
    "CATEGORIES",
    "FIELDS",
    "Evaluation",
    "FieldScore",
    "Instruction",
    "Reading",
    "agrees",
    "evaluate",
    "read",
    "read_memo",
    "same_expected",
]
