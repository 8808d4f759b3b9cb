"""The probe's vocabulary: the reason rule, reply classification and verdicts."""

from __future__ import annotations

import pytest

from harness.probe.outcomes import (
    AS_BOTH,
    AS_REFERENCE,
    AS_SPEC,
    DIED,
    DIFFERS,
    EMPTY_RESULT,
    IS_ERROR_MASKED,
    IS_ERROR_REASON,
    MALFORMED,
    NO_REPLY,
    RESULT,
    Expect,
    classify_reply,
    reason_present,
    verdict,
)


def _is_error(text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": text}], "isError": True},
    }


class TestReasonRule:
    @pytest.mark.parametrize(
        "text",
        ["Error executing tool weather", "Internal error", "ERROR: weather failed", "Tool execution failed."],
    )
    def test_generic_text_naming_only_the_tool_is_masked(self, text: str) -> None:
        assert not reason_present(text, "weather")

    @pytest.mark.parametrize(
        "text",
        [
            "ERROR: no station near Atlantis",
            "Error calling tool 'weather': no station near Atlantis",
            "Unknown tool: nope",
        ],
    )
    def test_a_word_beyond_the_generic_ones_is_a_reason(self, text: str) -> None:
        assert reason_present(text, "weather")

    def test_words_of_the_tool_name_do_not_count_as_a_reason(self) -> None:
        assert not reason_present("Error executing tool get_weather_now", "get_weather_now")

    def test_an_expected_reason_must_occur_in_the_text(self) -> None:
        assert reason_present("ERROR: No Station near Atlantis", "weather", expected="no station")
        assert not reason_present("ERROR: upstream timeout", "weather", expected="no station")


class TestClassifyReply:
    def test_an_error_reply_is_labelled_by_its_code(self) -> None:
        out = classify_reply({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}})
        assert (out.label, out.detail) == ("error -32601", "nope")

    def test_is_error_with_and_without_reason(self) -> None:
        assert classify_reply(_is_error("ERROR: no station near Oslo"), "weather").label == IS_ERROR_REASON
        assert classify_reply(_is_error("Error executing tool weather"), "weather").label == IS_ERROR_MASKED

    def test_an_empty_result_differs_from_a_result(self) -> None:
        assert classify_reply({"jsonrpc": "2.0", "id": 1, "result": {}}).label == EMPTY_RESULT
        ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "5"}]}}
        assert classify_reply(ok).label == RESULT

    def test_a_tools_list_result_is_summarised_by_name(self) -> None:
        listed = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "add"}, {"name": "weather"}]}}
        assert classify_reply(listed).detail == "2 tools: add, weather"

    @pytest.mark.parametrize(
        "message",
        [{"jsonrpc": "2.0", "id": 1}, {"jsonrpc": "2.0", "id": 1, "result": []}, {"id": 1, "error": "x"}],
    )
    def test_a_reply_with_neither_result_nor_error_object_is_malformed(
        self, message: dict[str, object]
    ) -> None:
        assert classify_reply(message).label == MALFORMED

    def test_long_details_are_cut_to_one_short_line(self) -> None:
        out = classify_reply(_is_error("word\n" * 200), "weather")
        assert "\n" not in out.detail
        assert len(out.detail) <= 100


class TestVerdict:
    REF = Expect("error -32600", ("error -32600",))
    SPEC = Expect("any error", ("error *",))

    def test_matching_both_sources(self) -> None:
        assert verdict("error -32600", self.REF, self.SPEC) == AS_BOTH

    def test_matching_one_source(self) -> None:
        assert verdict("error -32602", self.REF, self.SPEC) == AS_SPEC
        assert verdict("error -32600", self.REF, None) == AS_REFERENCE

    def test_a_silent_source_never_matches(self) -> None:
        assert verdict("result", None, None) == DIFFERS

    def test_failures_are_verdicts_of_their_own(self) -> None:
        assert verdict(NO_REPLY, self.REF, self.SPEC) == "no reply"
        assert verdict(DIED, self.REF, self.SPEC) == "server died"
        assert verdict("result", self.REF, self.SPEC) == DIFFERS
