"""The tools/call lattice, SEP-1303 by version, tool results, and tools/list pagination."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.pair import ClientServerPair, CountingTool, error_code, result_of, text_of

from harness.protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SUPPORTED_VERSIONS,
    MCPServer,
)
from harness.protocol.tools import encode_cursor

BEFORE_1303 = [v for v in SUPPORTED_VERSIONS if v < "2025-11-25"]
SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
    "required": ["text"],
}


def lattice_pair(version: str, raises: BaseException | None = None) -> tuple[ClientServerPair, CountingTool]:
    """``echo`` (allowed, counted) and ``secret`` (present, not allow-listed, counted)."""
    server = MCPServer("lattice", allowed_tools=["echo"])
    tool = CountingTool(raises)
    server.add_tool("echo", tool, SCHEMA)
    server.add_tool("secret", tool, SCHEMA)
    pair = ClientServerPair(server, protocol_version=version)
    assert pair.client.protocol_version == version
    return pair, tool


def call(pair: ClientServerPair, params: dict[str, Any]) -> dict[str, Any]:
    reply = pair.request(7, "tools/call", params)
    return reply


ANY_VERSION: list[tuple[str, dict[str, Any], int]] = [
    ("unknown tool is -32601", {"name": "nope", "arguments": {"text": "a"}}, METHOD_NOT_FOUND),
    ("unknown tool with bad arguments is still -32601", {"name": "nope", "arguments": {}}, METHOD_NOT_FOUND),
    ("not allow-listed is -32600", {"name": "secret", "arguments": {"text": "a"}}, INVALID_REQUEST),
    (
        "not allow-listed is checked before the arguments",
        {"name": "secret", "arguments": {}},
        INVALID_REQUEST,
    ),
    ("name missing is -32602", {"arguments": {"text": "a"}}, INVALID_PARAMS),
    ("name not a string is -32602", {"name": 3, "arguments": {"text": "a"}}, INVALID_PARAMS),
    ("arguments not an object is -32602", {"name": "echo", "arguments": ["a"]}, INVALID_PARAMS),
]


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
@pytest.mark.parametrize(("params", "code"), [r[1:] for r in ANY_VERSION], ids=[r[0] for r in ANY_VERSION])
def test_lattice_protocol_errors_and_the_tool_never_runs(
    version: str, params: dict[str, Any], code: int
) -> None:
    pair, tool = lattice_pair(version)
    assert error_code(call(pair, params)) == code
    assert tool.calls == []


def test_not_allow_listed_message_names_the_tool() -> None:
    pair, _ = lattice_pair("2025-06-18")
    assert "secret" in call(pair, {"name": "secret", "arguments": {"text": "a"}})["error"]["message"]


BAD_ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    ("missing required argument", {}, "text"),
    ("wrong type", {"text": 5}, "text"),
    ("wrong type of an optional argument", {"text": "a", "times": "many"}, "times"),
    ("bool is not an integer", {"text": "a", "times": True}, "times"),
]


@pytest.mark.parametrize("version", BEFORE_1303)
@pytest.mark.parametrize(
    ("arguments", "named"), [r[1:] for r in BAD_ARGUMENTS], ids=[r[0] for r in BAD_ARGUMENTS]
)
def test_bad_arguments_before_2025_11_25_are_invalid_params(
    version: str, arguments: dict[str, Any], named: str
) -> None:
    pair, tool = lattice_pair(version)
    reply = call(pair, {"name": "echo", "arguments": arguments})
    assert error_code(reply) == INVALID_PARAMS
    assert repr(named) in reply["error"]["message"]
    assert tool.calls == []


@pytest.mark.parametrize(
    ("arguments", "named"), [r[1:] for r in BAD_ARGUMENTS], ids=[r[0] for r in BAD_ARGUMENTS]
)
def test_bad_arguments_on_2025_11_25_are_tool_errors_naming_the_argument(
    arguments: dict[str, Any], named: str
) -> None:
    pair, tool = lattice_pair("2025-11-25")
    result = result_of(call(pair, {"name": "echo", "arguments": arguments}))
    assert result["isError"] is True
    assert repr(named) in text_of(result)
    assert text_of(result).startswith("ERROR: ")
    assert tool.calls == []


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_a_raising_tool_is_an_error_result_with_the_reason(version: str) -> None:
    pair, tool = lattice_pair(version, raises=ValueError("disk full"))
    result = result_of(call(pair, {"name": "echo", "arguments": {"text": "a"}}))
    assert result == {"content": [{"type": "text", "text": "ERROR: disk full"}], "isError": True}
    assert len(tool.calls) == 1


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
@pytest.mark.parametrize("strategy", ["is_error", "collapse"])
def test_a_tool_that_validates_itself_gets_bad_arguments_and_its_own_text_goes_through_the_strategy(
    version: str, strategy: str
) -> None:
    def strict(**arguments: Any) -> str:
        if not isinstance(arguments.get("text"), str):
            raise ValueError("1 validation error: text: Input should be a valid string")
        return "ran"

    server = MCPServer("own", tool_errors=strategy)
    server.add_tool("echo", strict, SCHEMA, checked=False)
    pair = ClientServerPair(server, protocol_version=version)
    reply = call(pair, {"name": "echo", "arguments": {"text": 5}})
    said = "1 validation error: text: Input should be a valid string"
    if strategy == "collapse":
        assert reply["error"]["message"] == said  # the strategy decides, whatever the version
    else:
        assert result_of(reply) == {"content": [{"type": "text", "text": f"ERROR: {said}"}], "isError": True}
    listed = pair.request(8, "tools/list", {})["result"]["tools"][0]
    assert listed["inputSchema"] == SCHEMA  # still the schema the client is shown


def test_a_valid_call_runs_the_tool_once_with_its_arguments_as_keywords() -> None:
    pair, tool = lattice_pair("2025-11-25")
    result = result_of(call(pair, {"name": "echo", "arguments": {"text": "a", "times": 2}}))
    assert result == {"content": [{"type": "text", "text": "ran"}]}
    assert tool.calls == [{"text": "a", "times": 2}]


def test_omitted_arguments_are_an_empty_object() -> None:
    server = MCPServer("s")
    server.add_tool("now", lambda: "noon")
    pair = ClientServerPair(server)
    assert text_of(result_of(call(pair, {"name": "now"}))) == "noon"


def test_an_exception_message_that_is_empty_is_reported_by_type() -> None:
    pair, _ = lattice_pair("2025-11-25", raises=KeyError())
    assert text_of(result_of(call(pair, {"name": "echo", "arguments": {"text": "a"}}))) == "ERROR: KeyError"


RETURNS: list[tuple[str, Any, list[dict[str, Any]]]] = [
    ("text becomes one text block", "hi", [{"type": "text", "text": "hi"}]),
    ("a number becomes text", 5, [{"type": "text", "text": "5"}]),
    ("None becomes empty text", None, [{"type": "text", "text": ""}]),
    ("one block is wrapped", {"type": "text", "text": "x"}, [{"type": "text", "text": "x"}]),
    (
        "a list of blocks is the content",
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    ),
    (
        "an image block passes",
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        [{"type": "image", "data": "aGk=", "mimeType": "image/png"}],
    ),
]


@pytest.mark.parametrize(("value", "content"), [r[1:] for r in RETURNS], ids=[r[0] for r in RETURNS])
def test_tool_return_values_become_content(value: Any, content: list[dict[str, Any]]) -> None:
    server = MCPServer("s")
    server.add_tool("t", lambda: value)
    assert result_of(call(ClientServerPair(server), {"name": "t"}))["content"] == content


@pytest.mark.parametrize(
    "value",
    [object(), [{"text": "no type"}], {"type": "text"}, {"content": "not a list"}],
    ids=[
        "an object is a tool failure",
        "a block without type is a tool failure",
        "a text block without text is a tool failure",
        "content not a list is a tool failure",
    ],
)
def test_unrepresentable_return_values_are_tool_failures(value: Any) -> None:
    server = MCPServer("s")
    server.add_tool("t", lambda: value)
    result = result_of(call(ClientServerPair(server), {"name": "t"}))
    assert result["isError"] is True and text_of(result).startswith("ERROR: ")


def test_a_removed_tool_is_unknown() -> None:
    pair, _ = lattice_pair("2025-11-25")
    pair.server.remove_tool("echo")
    assert error_code(call(pair, {"name": "echo", "arguments": {"text": "a"}})) == METHOD_NOT_FOUND


def test_revoking_a_tool_mid_session_makes_it_not_permitted() -> None:
    pair, tool = lattice_pair("2025-11-25")
    pair.server.set_allowed_tools([])
    assert error_code(call(pair, {"name": "echo", "arguments": {"text": "a"}})) == INVALID_REQUEST
    assert tool.calls == []


@pytest.mark.parametrize(
    "schema",
    [{"type": "array"}, {"type": "object", "properties": {"x": {"type": "no-such-type"}}}],
    ids=["inputSchema must be an object schema", "an invalid inputSchema is refused at registration"],
)
def test_add_tool_refuses_bad_schemas(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="inputSchema"):
        MCPServer("s").add_tool("t", lambda: "x", schema)


# -- pagination ---------------------------------------------------------------------------


def paged(n: int, page_size: int | None) -> ClientServerPair:
    server = MCPServer("paged", page_size=page_size)
    for i in range(n):
        server.add_tool(f"t{i:02d}", lambda: "x")
    return ClientServerPair(server)


@pytest.mark.parametrize(
    ("n", "size"),
    [(0, 3), (1, 3), (3, 3), (7, 3), (10, 1), (5, None)],
    ids=["no tools", "one short page", "exactly one page", "three pages", "page size one", "no page size"],
)
def test_pages_cover_every_tool_once_in_registration_order(n: int, size: int | None) -> None:
    pair = paged(n, size)
    names: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        result = result_of(pair.request(pages + 10, "tools/list", {"cursor": cursor} if cursor else None))
        pages += 1
        assert size is None or len(result["tools"]) <= size
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        assert isinstance(cursor, str)
    assert names == [f"t{i:02d}" for i in range(n)]
    assert pages == (1 if size is None or n == 0 else -(-n // size))


def test_pages_are_stable_across_repeated_listing() -> None:
    pair = paged(7, 3)
    first = result_of(pair.request(1, "tools/list"))
    again = result_of(pair.request(2, "tools/list"))
    assert first == again
    second = result_of(pair.request(3, "tools/list", {"cursor": first["nextCursor"]}))
    assert second == result_of(pair.request(4, "tools/list", {"cursor": first["nextCursor"]}))


def test_cursors_are_opaque_strings_not_offsets() -> None:
    cursor = result_of(paged(7, 3).request(1, "tools/list"))["nextCursor"]
    assert cursor not in {"3", "1", "2"}


INVALID_CURSORS = ["garbage!!", "", "3", 3, None.__class__.__name__, encode_cursor(-1), "cmVzb3VyY2VzOjE="]


@pytest.mark.parametrize(
    "cursor",
    INVALID_CURSORS,
    ids=["not base64", "empty", "a bare offset", "a number", "a word", "negative offset", "foreign kind"],
)
@pytest.mark.parametrize("size", [3, None], ids=["paged", "unpaged"])
def test_an_invalid_cursor_is_invalid_params(cursor: Any, size: int | None) -> None:
    assert error_code(paged(7, size).request(1, "tools/list", {"cursor": cursor})) == INVALID_PARAMS


def test_a_cursor_past_the_end_is_an_empty_last_page() -> None:
    result = result_of(paged(4, 2).request(1, "tools/list", {"cursor": encode_cursor(50)}))
    assert result == {"tools": []}


def test_page_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="page_size"):
        MCPServer("s", page_size=0)
