"""``read_memo`` is ``read``, remembered: held equal to the plain path on every corpus text, for
the call's arguments and without them, first read and remembered, and a remembered reading's
instruction is the caller's own to change."""

from __future__ import annotations

import pytest

from harness.fixtures.corpus import load_corpus
from harness.reading import _reader as reader
from harness.reading import read, read_memo

TOOLS = ("search", "get_file", "send_money", "read_channel_messages")


@pytest.fixture(autouse=True)
def _fresh() -> None:
    reader._memo.clear()


def test_every_corpus_text_reads_alike_through_the_memo_first_and_again() -> None:
    corpus = load_corpus()
    assert len(corpus) > 100
    for message in corpus:
        args = message.arguments if isinstance(message.arguments, dict) else None
        for arguments, tools in ((args, None), (None, TOOLS), (args, TOOLS)):
            plain = read(message.text, arguments=arguments, tools=tools)
            assert read_memo(message.text, arguments=arguments, tools=tools) == plain, message.id
            assert read_memo(message.text, arguments=arguments, tools=tools) == plain, message.id


def test_arguments_that_differ_only_in_type_or_order_are_read_apart() -> None:
    text = "Expected number, received string at count"
    for arguments in ({"count": 1}, {"count": "1"}, {"count": 1.0}, {"count": True}, {"a": 1, "count": 2},
                      {"count": 2, "a": 1}):  # fmt: skip
        assert read_memo(text, arguments=arguments) == read(text, arguments=arguments)
    assert len(reader._memo) == 6


def test_a_remembered_instruction_is_a_copy_the_caller_may_change() -> None:
    text = "Error: call get_file with path 'notes.txt' to continue"
    first = read_memo(text, tools=TOOLS)
    if first.instruction is None:
        pytest.skip("the reader finds no instruction in this text")
    first.instruction.arguments.clear()  # type: ignore[attr-defined]
    assert read_memo(text, tools=TOOLS) == read(text, tools=TOOLS)


def test_the_memo_is_bounded() -> None:
    for i in range(reader.MEMO_SIZE + 5):
        read_memo(f"timeout after {i} ms")
    assert len(reader._memo) <= reader.MEMO_SIZE
