"""The conformance fixture: the server the official MCP conformance suite runs against.

What it serves is data, ``harness/data/conformance.toml`` (tools, resources, a
resource template, prompts and completions named as the suite's scenarios ask);
this module holds only the few behaviours data cannot say, in :data:`FUNCTIONS`,
and the loader. Nothing here is special-cased in the core: the fixture uses the
same registration calls as any server, so a pass means the core does it.

Every function gets the server, the entry's ``options`` table and the call's
arguments (or a template's variables) as keywords. None sleeps: the suite's
"~50ms" pauses between log or progress messages are not checked, and the
fixture stays deterministic.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from harness.protocol.server import MCPServer

FIXTURE_NAME = "conformance.toml"
BLOB_PREFIX = "blob:"


def raise_error(server: MCPServer, options: dict[str, Any], **arguments: Any) -> Any:
    """Always fail, so the strategy under test reports it (is_error: a readable isError result)."""
    raise RuntimeError(options["message"])


def log_steps(server: MCPServer, options: dict[str, Any], **arguments: Any) -> str:
    """Send each of ``options.messages`` as a log notification, then return ``options.result``."""
    for text in options["messages"]:
        server.log(options.get("level", "info"), text, logger=options.get("logger"))
    return str(options["result"])


def report_progress(server: MCPServer, options: dict[str, Any], **arguments: Any) -> str:
    """Report each of ``options.steps`` out of ``options.total``, then return ``options.result``."""
    for step in options["steps"]:
        server.progress(step, options.get("total"))
    return str(options["result"])


def json_from_variables(server: MCPServer, options: dict[str, Any], **variables: str) -> str:
    """A JSON object of the template's variables plus ``options.fields`` ({var} filled in)."""
    fields = {
        key: value.format(**variables) if isinstance(value, str) else value
        for key, value in options.get("fields", {}).items()
    }
    return json.dumps({**variables, **fields}, separators=(",", ":"))


def embedded_resource_prompt(
    server: MCPServer, options: dict[str, Any], **arguments: Any
) -> list[dict[str, Any]]:
    """A prompt embedding the resource named by the ``options.argument`` argument, then a question."""
    uri = str(arguments[options["argument"]])
    resource = {"uri": uri, "mimeType": options["mime_type"], "text": options["text"]}
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        {"role": "user", "content": {"type": "text", "text": options["question"]}},
    ]


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "raise_error": raise_error,
    "log_steps": log_steps,
    "report_progress": report_progress,
    "json_from_variables": json_from_variables,
    "embedded_resource_prompt": embedded_resource_prompt,
}
"""Behaviours the fixture file can name with ``function = "..."``."""


def load_fixture(path: Path | None = None) -> dict[str, Any]:
    """The fixture as data, with ``blob:NAME`` strings replaced; ValueError names a bad entry."""
    text = path.read_text() if path is not None else _shipped().read_text()
    data = tomllib.loads(text)
    blobs = data.get("blobs", {})
    return {key: value for key, value in _fill(data, blobs, "fixture").items() if key != "blobs"}


def _shipped() -> Any:
    return resources.files("harness").joinpath("data", FIXTURE_NAME)


def _fill(value: Any, blobs: dict[str, str], where: str) -> Any:
    if isinstance(value, str) and value.startswith(BLOB_PREFIX):
        name = value[len(BLOB_PREFIX) :]
        if name not in blobs:
            raise ValueError(f"{where}: unknown blob {name!r} (have: {', '.join(sorted(blobs))})")
        return blobs[name]
    if isinstance(value, dict):
        return {k: _fill(v, blobs, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, blobs, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def _function(server: MCPServer, entry: dict[str, Any], where: str) -> Callable[..., Any]:
    name = entry["function"]
    fn = FUNCTIONS.get(name)
    if fn is None:
        raise ValueError(f"{where}: unknown function {name!r} (have: {', '.join(sorted(FUNCTIONS))})")
    return partial(fn, server, entry.get("options", {}))


def _constant(value: Any) -> Callable[..., Any]:
    def answer(**_: Any) -> Any:
        return copy.deepcopy(value)  # a caller mutating the result must not change the fixture

    return answer


def build_conformance_server() -> MCPServer:
    """A fresh server holding the shipped fixture (one per MCP session; ``harness serve --conformance``)."""
    return build_fixture_server(None)


def build_fixture_server(path: Path | None) -> MCPServer:
    """A fresh server holding everything the fixture file at ``path`` (None: the shipped one) declares."""
    data = load_fixture(path)
    meta = data.get("server", {})
    server = MCPServer(
        meta.get("name", "harness-conformance"),
        meta.get("version", "0"),
        tool_errors=meta.get("tool_errors", "is_error"),
    )
    for i, tool in enumerate(data.get("tools", [])):
        where = f"tools[{i}] {tool.get('name')!r}"
        if ("content" in tool) == ("function" in tool):
            raise ValueError(f"{where}: give exactly one of content and function")
        fn = _function(server, tool, where) if "function" in tool else _constant({"content": tool["content"]})
        server.add_tool(tool["name"], fn, tool.get("input_schema"), tool.get("description", ""))
    for res in data.get("resources", []):
        server.add_resource(
            res["uri"],
            res["name"],
            text=res.get("text"),
            blob=res.get("blob"),
            mime_type=res.get("mime_type", "text/plain"),
            description=res.get("description", ""),
        )
    for i, tmpl in enumerate(data.get("resource_templates", [])):
        where = f"resource_templates[{i}] {tmpl.get('uri_template')!r}"
        server.add_resource_template(
            tmpl["uri_template"],
            tmpl["name"],
            _function(server, tmpl, where),
            mime_type=tmpl.get("mime_type", "text/plain"),
            description=tmpl.get("description", ""),
        )
    for i, prompt in enumerate(data.get("prompts", [])):
        where = f"prompts[{i}] {prompt.get('name')!r}"
        kinds = [k for k in ("template", "messages", "function") if k in prompt]
        if len(kinds) != 1:
            raise ValueError(f"{where}: give exactly one of template, messages and function")
        body: str | Callable[..., Any]
        if "template" in prompt:
            body = prompt["template"]
        elif "messages" in prompt:
            body = _constant(prompt["messages"])
        else:
            body = _function(server, prompt, where)
        server.add_prompt(prompt["name"], body, prompt.get("description", ""), prompt.get("arguments"))
    for comp in data.get("completions", []):
        server.add_completion(comp["ref"], comp["argument"], comp["values"])
    return server
