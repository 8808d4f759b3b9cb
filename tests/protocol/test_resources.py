"""Resources (list, templates, read; unknown URI -32002) and prompts (list, get; missing variable -32602)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from helpers.pair import ClientServerPair, error_code, result_of

from harness.protocol import INVALID_PARAMS, RESOURCE_NOT_FOUND, MCPServer


def resource_pair() -> ClientServerPair:
    server = MCPServer("res")
    server.add_resource("lab://readme", "readme", text="hello", description="what this is")
    server.add_resource(
        "lab://logo", "logo", blob=base64.b64encode(b"\x89PNG").decode(), mime_type="image/png"
    )
    server.add_resource_template("lab://item/{id}", "item", lambda id: f"item {id}")
    server.add_resource_template(
        "lab://raw/{id}", "raw", lambda id: id.encode(), mime_type="application/octet-stream"
    )
    return ClientServerPair(server)


def test_resources_list_shows_every_static_resource_in_order() -> None:
    result = result_of(resource_pair().request(1, "resources/list"))
    assert result == {
        "resources": [
            {
                "uri": "lab://readme",
                "name": "readme",
                "mimeType": "text/plain",
                "description": "what this is",
            },
            {"uri": "lab://logo", "name": "logo", "mimeType": "image/png"},
        ]
    }


def test_resource_templates_are_listed_apart() -> None:
    result = result_of(resource_pair().request(1, "resources/templates/list"))
    assert [t["uriTemplate"] for t in result["resourceTemplates"]] == ["lab://item/{id}", "lab://raw/{id}"]


READS: list[tuple[str, str, dict[str, Any]]] = [
    ("a text resource", "lab://readme", {"uri": "lab://readme", "mimeType": "text/plain", "text": "hello"}),
    ("a blob resource", "lab://logo", {"uri": "lab://logo", "mimeType": "image/png", "blob": "iVBORw=="}),
    (
        "a template match",
        "lab://item/42",
        {"uri": "lab://item/42", "mimeType": "text/plain", "text": "item 42"},
    ),
    (
        "a template returning bytes is a blob",
        "lab://raw/ab",
        {"uri": "lab://raw/ab", "mimeType": "application/octet-stream", "blob": "YWI="},
    ),
]


@pytest.mark.parametrize(("uri", "content"), [r[1:] for r in READS], ids=[f"read {r[0]}" for r in READS])
def test_resources_read(uri: str, content: dict[str, Any]) -> None:
    assert result_of(resource_pair().request(1, "resources/read", {"uri": uri})) == {"contents": [content]}


UNKNOWN = ["lab://nope", "lab://item/", "lab://item/a/b", "other://readme", ""]


@pytest.mark.parametrize("uri", UNKNOWN, ids=[f"unknown uri {u!r} is -32002" for u in UNKNOWN])
def test_an_unknown_resource_is_resource_not_found_with_the_uri(uri: str) -> None:
    reply = resource_pair().request(1, "resources/read", {"uri": uri})
    assert error_code(reply) == RESOURCE_NOT_FOUND == -32002
    assert reply["error"]["data"] == {"uri": uri}


@pytest.mark.parametrize(
    "params", [{}, {"uri": 5}], ids=["read without uri is -32602", "read with a number is -32602"]
)
def test_resources_read_needs_a_string_uri(params: dict[str, Any]) -> None:
    assert error_code(resource_pair().request(1, "resources/read", params)) == INVALID_PARAMS


def test_a_resource_has_exactly_one_of_text_and_blob() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        MCPServer("s").add_resource("a://b", "b")
    with pytest.raises(ValueError, match="exactly one"):
        MCPServer("s").add_resource("a://b", "b", text="t", blob="Yg==")


# -- prompts ---------------------------------------------------------------------------------


def prompt_pair() -> ClientServerPair:
    server = MCPServer("prompts")
    server.add_prompt("greet", "Say hello to {name} from {place}.", "Greet someone")
    server.add_prompt("fixed", "No variables here.")
    server.add_prompt("fn", lambda topic="x": f"Tell me about {topic}.", arguments=[{"name": "topic"}])
    return ClientServerPair(server)


def test_prompts_list_derives_required_arguments_from_the_template() -> None:
    prompts = result_of(prompt_pair().request(1, "prompts/list"))["prompts"]
    assert prompts[0] == {
        "name": "greet",
        "description": "Greet someone",
        "arguments": [{"name": "name", "required": True}, {"name": "place", "required": True}],
    }
    assert prompts[1] == {"name": "fixed", "arguments": []}


GETS: list[tuple[str, dict[str, Any], str]] = [
    (
        "all variables filled",
        {"name": "greet", "arguments": {"name": "Ada", "place": "Oslo"}},
        "Say hello to Ada from Oslo.",
    ),
    ("a template without variables", {"name": "fixed"}, "No variables here."),
    (
        "a function prompt with its optional argument",
        {"name": "fn", "arguments": {"topic": "MCP"}},
        "Tell me about MCP.",
    ),
    ("a function prompt without it", {"name": "fn"}, "Tell me about x."),
]


@pytest.mark.parametrize(("params", "text"), [g[1:] for g in GETS], ids=[f"prompts/get {g[0]}" for g in GETS])
def test_prompts_get_renders_a_user_message(params: dict[str, Any], text: str) -> None:
    result = result_of(prompt_pair().request(1, "prompts/get", params))
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": text}}]


BAD_GETS: list[tuple[str, dict[str, Any], str]] = [
    ("a missing variable is -32602", {"name": "greet", "arguments": {"name": "Ada"}}, "place"),
    ("no arguments at all is -32602", {"name": "greet"}, "name"),
    ("an unknown prompt is -32602", {"name": "nope"}, "nope"),
    ("arguments not an object is -32602", {"name": "greet", "arguments": ["Ada"]}, "object"),
]


@pytest.mark.parametrize(("params", "named"), [b[1:] for b in BAD_GETS], ids=[b[0] for b in BAD_GETS])
def test_prompts_get_errors_name_the_problem(params: dict[str, Any], named: str) -> None:
    reply = prompt_pair().request(1, "prompts/get", params)
    assert error_code(reply) == INVALID_PARAMS
    assert named in reply["error"]["message"]


def test_the_demo_lab_serves_its_resource_and_prompt(pair: ClientServerPair) -> None:
    assert [r["uri"] for r in pair.client.list_resources()] == ["lab://readme"]
    assert pair.client.read_resource("lab://readme")["contents"][0]["text"] == "The harness demo lab."
    assert [p["name"] for p in pair.client.list_prompts()] == ["greet"]
    got = pair.client.get_prompt("greet", {"name": "Ada"})
    assert got["messages"][0]["content"]["text"] == "Say hello to Ada."
