"""The conformance fixture file and its loader (no Node needed)."""

from __future__ import annotations

import base64
import io
import wave
from pathlib import Path

import pytest
from helpers.pair import ClientServerPair, result_of

from harness.fixtures.conformance import (
    FUNCTIONS,
    build_conformance_server,
    build_fixture_server,
    load_fixture,
)


@pytest.fixture
def pair() -> ClientServerPair:
    return ClientServerPair(build_conformance_server())


def test_every_tool_resource_and_prompt_the_suite_names_is_served(pair: ClientServerPair) -> None:
    tools = {t["name"] for t in result_of(pair.request(2, "tools/list"))["tools"]}
    assert {
        "test_simple_text",
        "test_error_handling",
        "test_image_content",
        "test_multiple_content_types",
    } <= tools
    uris = {r["uri"] for r in result_of(pair.request(3, "resources/list"))["resources"]}
    assert {"test://static-text", "test://static-binary"} <= uris
    templates = result_of(pair.request(4, "resources/templates/list"))["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]
    prompts = {p["name"] for p in result_of(pair.request(5, "prompts/list"))["prompts"]}
    assert {"test_simple_prompt", "test_prompt_with_arguments"} <= prompts


def test_the_image_blob_is_a_real_png_and_the_audio_a_real_wav() -> None:
    server = build_conformance_server()
    png = base64.b64decode(server.resources["test://static-binary"].blob or "")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR"
    audio = server.tools["test_audio_content"].fn()["content"][0]
    with wave.open(io.BytesIO(base64.b64decode(audio["data"]))) as wav:
        assert wav.getnframes() > 0


def test_static_content_is_copied_so_a_caller_cannot_change_the_fixture() -> None:
    server = build_conformance_server()
    first = server.tools["test_simple_text"].fn()
    first["content"][0]["text"] = "changed"
    assert server.tools["test_simple_text"].fn()["content"][0]["text"] != "changed"


def test_two_builds_list_byte_identical_tools() -> None:
    one, two = ClientServerPair(build_conformance_server()), ClientServerPair(build_conformance_server())
    assert one.request(2, "tools/list") == two.request(2, "tools/list")


def test_every_function_the_file_names_exists() -> None:
    data = load_fixture()
    named = {
        e["function"]
        for kind in ("tools", "resource_templates", "prompts")
        for e in data[kind]
        if "function" in e
    }
    assert named <= set(FUNCTIONS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[tools]]\nname = "t"\nfunction = "nope"\n', "tools[0] 't': unknown function 'nope'"),
        (
            '[[tools]]\nname = "t"\ncontent = [{ type = "text", text = "blob:missing" }]\n',
            "unknown blob 'missing'",
        ),
        ('[[tools]]\nname = "t"\n', "tools[0] 't': give exactly one of content and function"),
        ('[[prompts]]\nname = "p"\n', "prompts[0] 'p': give exactly one of template, messages and function"),
    ],
)
def test_a_broken_fixture_file_names_the_bad_entry(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "fixture.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        build_fixture_server(path)
