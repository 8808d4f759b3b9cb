"""The chat-completions client against a real HTTP server: what it retries, how long it waits,
what it gives up on, and that the key goes only into the Authorization header."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from fake_endpoint import Answer, FakeEndpoint, completion, final, scripted, tool_call

from harness.llm.client import ChatClient, EndpointError, malformed_tool_calls

REQUEST = {"model": "fake", "messages": [{"role": "user", "content": "hi"}]}


OPEN: list[ChatClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while OPEN:
        OPEN.pop().close()


def client(fake: FakeEndpoint, waits: list[float], *, retries: int = 3, timeout_s: float = 5.0) -> ChatClient:
    made = ChatClient(
        fake.base_url,
        "HARNESS_TEST_KEY",
        timeout_s=timeout_s,
        max_retries=retries,
        backoff_s=0.5,
        max_wait_s=30.0,
        sleep=waits.append,  # the waits are recorded, not slept
    )
    OPEN.append(made)
    return made


def test_a_429_is_retried_after_the_time_its_retry_after_names() -> None:
    busy = Answer({"error": "slow down"}, status=429, headers={"Retry-After": "7"})
    with FakeEndpoint(scripted(busy, final("ok"))) as fake:
        waits: list[float] = []
        reply = client(fake, waits).complete(REQUEST)
    # waited at the endpoint's gate: the 7 s less the microseconds since the 429 arrived
    assert waits == [pytest.approx(7.0, abs=0.5)] and reply.attempts == 2 and len(fake.requests) == 2
    assert reply.response["choices"][0]["message"]["content"] == "ok"


def test_5xx_answers_are_retried_with_a_doubling_backoff() -> None:
    down = Answer("upstream broke", status=502)
    with FakeEndpoint(scripted(down, down, final("ok"))) as fake:
        waits: list[float] = []
        reply = client(fake, waits).complete(REQUEST)
    assert waits == [0.5, 1.0] and reply.attempts == 3


def test_malformed_tool_call_arguments_are_asked_again_and_their_tokens_counted() -> None:
    broken = tool_call("weather", '{"city": "Par')
    with FakeEndpoint(scripted(broken, tool_call("weather", {"city": "Paris"}))) as fake:
        reply = client(fake, []).complete(REQUEST)
    assert reply.attempts == 2 and reply.tokens_in == 200 and reply.tokens_out == 20
    assert malformed_tool_calls(reply.response["choices"][0]["message"]) is None


def test_retries_exhausted_raise_with_the_reason() -> None:
    broken = tool_call("weather", "[1, 2]")
    with FakeEndpoint(scripted(broken)) as fake, pytest.raises(EndpointError) as err:
        client(fake, [], retries=2).complete(REQUEST)
    assert "not a JSON object" in str(err.value) and "gave up after 3 attempts" in str(err.value)
    assert len(fake.requests) == 3


def test_a_timeout_is_retried() -> None:
    with FakeEndpoint(scripted(Answer(final("late"), delay_s=2.0), final("ok"))) as fake:
        reply = client(fake, [], timeout_s=0.5).complete(REQUEST)
    # >= 2: on a loaded machine the prompt answer may time out too, and is then asked again
    assert reply.attempts >= 2 and reply.response["choices"][0]["message"]["content"] == "ok"


def test_a_401_is_not_retried_and_the_reason_names_the_variable_not_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESS_TEST_KEY", "sk-very-secret")
    echo = Answer({"error": "Incorrect API key provided: sk-very-secret"}, status=401)  # as hosted APIs do
    with FakeEndpoint(scripted(echo)) as fake:
        with pytest.raises(EndpointError) as err:
            client(fake, []).complete(REQUEST)
        assert fake.headers[0]["authorization"] == "Bearer sk-very-secret"
    assert len(fake.requests) == 1
    assert "401" in str(err.value) and "HARNESS_TEST_KEY" in str(err.value)
    assert "sk-very-secret" not in str(err.value)


def test_no_key_in_the_environment_sends_no_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_TEST_KEY", raising=False)
    with FakeEndpoint(scripted(completion({"content": "ok"}))) as fake:
        client(fake, []).complete(REQUEST)
    assert "authorization" not in fake.headers[0]


def test_a_refused_connection_is_retried_then_given_up() -> None:
    with FakeEndpoint(scripted(final("never"))) as fake:
        dead = client(fake, [], retries=1)
    with pytest.raises(EndpointError, match="gave up after 2 attempts"):
        dead.complete(REQUEST)  # the server is gone


def test_loading_the_agent_does_not_import_httpx() -> None:
    # harness run and harness list load the agent's class without asking an endpoint.
    code = "import sys, harness.llm; print('httpx' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False", done.stdout + done.stderr
