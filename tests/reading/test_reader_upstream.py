"""The reader on upstream failures: rate limits, timeouts, failing servers, retired things.

Every text here was written for this file from the general shapes the library texts' train
split shows (``docs/corpus.md``, "Library texts") — a status a client library puts first, a gRPC
status code, a retired endpoint, a throttled call — in words of its own: none is a text of either
dataset, and none was taken from a dev provider.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.reading import read

# (id, text, arguments, category, argument, expected, retry_after_s, actionable)
CASES: list[tuple[str, str, dict[str, Any] | None, str, str | None, str | None, float | None, bool]] = [
    # a status first, then the server's words
    ("leading 503", "503 The backend is restarting", None, "transient", None, None, None, True),
    ("leading 404", "404 Requested bucket was missing", None, "not_found", None, None, None, True),
    (
        "leading 403",
        '403 {"message": "Missing scope repo:write"}',
        None,
        "permission",
        None,
        None,
        None,
        True,
    ),
    (
        "client error",
        "404 Client Error: Not Found for url: https://api.example.com/v2/users/7",
        None,
        "not_found",
        None,
        None,
        None,
        True,
    ),
    (
        "server error",
        "500 Server Error: Internal Server Error for url: https://api.example.com/v2",
        None,
        "transient",
        None,
        None,
        None,
        True,
    ),
    (
        "retried statuses",
        "Max retries exceeded with url: /v2 (Caused by ResponseError('too many 429 error responses'))",
        None,
        "rate_limited",
        None,
        None,
        None,
        True,
    ),
    # gone for good
    ("410", "HTTP 410 Gone", None, "permanent", None, None, None, True),
    ("410 with its reason", "Upstream answered 410: Gone", None, "permanent", None, None, None, True),
    ("sunset endpoint", "The v1 search endpoint has been sunset.", None, "permanent", None, None, None, True),
    (
        "api version",
        "API version 2019-02-01 is no longer supported",
        None,
        "permanent",
        None,
        None,
        None,
        True,
    ),
    (
        "retired model with a replacement",
        "Model atlas-1 has been retired. We recommend switching to atlas-2.",
        None,
        "permanent",
        None,
        "atlas-2",
        None,
        True,
    ),
    (
        "an example replacement",
        "Model atlas-1 was discontinued. Please use a newer model, for example atlas-3.",
        None,
        "permanent",
        None,
        "atlas-3",
        None,
        True,
    ),
    ("disabled feature", "Wikis are disabled for this project", None, "permanent", None, None, None, True),
    (
        "retired value of an argument",
        "The format parameter value xml is no longer supported; we recommend you use json",
        {"format": "xml"},
        "bad_argument",
        "format",
        "json",
        None,
        True,
    ),
    # gRPC status codes
    (
        "grpc-go unavailable",
        "rpc error: code = Unavailable desc = connection error",
        None,
        "transient",
        None,
        None,
        None,
        True,
    ),
    (
        "grpc-go not found",
        "rpc error: code = NotFound desc = user 42",
        None,
        "not_found",
        None,
        None,
        None,
        True,
    ),
    (
        "grpc-go unimplemented",
        "rpc error: code = Unimplemented desc = unknown method Frobnicate",
        None,
        "permanent",
        None,
        None,
        None,
        True,
    ),
    (
        "grpcio unauthenticated",
        'status = StatusCode.UNAUTHENTICATED\n\tdetails = "token rejected"',
        None,
        "permission",
        None,
        None,
        None,
        True,
    ),
    # rate limits in other words
    ("rate exceeded", "Rate exceeded for this account", None, "rate_limited", None, None, None, True),
    (
        "exception name",
        "TooManyRequestsException: slow your calls",
        None,
        "rate_limited",
        None,
        None,
        None,
        True,
    ),
    (
        "reduce the rate",
        "Please reduce your request rate and retry in 4 seconds.",
        None,
        "rate_limited",
        None,
        None,
        4.0,
        True,
    ),
    (
        "quota exhausted",
        "Daily quota exhausted for project alpha",
        None,
        "rate_limited",
        None,
        None,
        None,
        True,
    ),
    ("quota exceeded", "You have exceeded your monthly quota.", None, "rate_limited", None, None, None, True),
    (
        "throughput",
        "Write throughput for table events was exceeded",
        None,
        "rate_limited",
        None,
        None,
        None,
        True,
    ),
    (
        "a link to the rate-limit docs is not a rate limit",
        "The record is locked by another request; retry the request. See https://example.com/docs/rate-limits",
        None,
        "transient",
        None,
        None,
        None,
        True,
    ),
    # timeouts
    (
        "did not respond in time",
        "The upstream did not respond in time",
        None,
        "timeout",
        None,
        None,
        None,
        True,
    ),
    # failing servers and connections
    (
        "closed without response",
        "Upstream closed connection without response",
        None,
        "transient",
        None,
        None,
        None,
        True,
    ),
    ("disconnected", "The server disconnected unexpectedly", None, "transient", None, None, None, True),
    ("overloaded", "The API is currently overloaded", None, "transient", None, None, None, True),
    (
        "internal error, try again",
        "Internal server error. Please try again in a moment.",
        None,
        "transient",
        None,
        None,
        None,
        True,
    ),
    ("internal error alone says nothing", "Internal server error", None, "unknown", None, None, None, False),
    # refusals
    (
        "no permission",
        "You do not have permission to delete this project",
        None,
        "permission",
        None,
        None,
        None,
        True,
    ),
    ("not accessible", "Resource not accessible with this token", None, "permission", None, None, None, True),
    (
        "invalid key is not a form",
        "Invalid API Key provided: sk_live_****",
        None,
        "permission",
        None,
        None,
        None,
        True,
    ),
    # things that do not exist
    ("no such thing", "No such invoice: 'in_123'", None, "not_found", None, None, None, True),
    (
        "internal error prefix",
        "internal error: no such table: users",
        None,
        "not_found",
        None,
        None,
        None,
        True,
    ),
]


@pytest.mark.parametrize(
    ("text", "arguments", "category", "argument", "expected", "retry_after_s", "actionable"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_an_upstream_failure_reads_as_it_says(
    text: str,
    arguments: dict[str, Any] | None,
    category: str,
    argument: str | None,
    expected: str | None,
    retry_after_s: float | None,
    actionable: bool,
) -> None:
    reading = read(text, arguments=arguments)
    got = (reading.category, reading.argument, reading.expected, reading.retry_after_s, reading.actionable)
    assert got == (category, argument, expected, retry_after_s, actionable)


def test_no_such_option_is_not_a_missing_thing() -> None:
    assert read("no such option: --colour").category != "not_found"
