"""Errors and the retry policy shared by every provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from cat_code.agent.providers.base import (
    HttpClientSlot,
    ModelError,
    RetryPolicy,
    result_text,
    retry_after_seconds,
    status_kind,
)
from cat_code.tools.base import ToolResult


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (401, "auth", False),
        (403, "permission", False),
        (404, "not_found", False),
        (400, "bad_request", False),
        (429, "rate_limit", True),
        (529, "overloaded", True),
        (500, "server", True),
        (504, "timeout", True),
    ],
)
def test_http_statuses_sort_into_kinds_and_only_transient_ones_retry(
    status: int, kind: str, retryable: bool
) -> None:
    assert status_kind(status) == kind
    assert ModelError(status_kind(status), "x").retryable is retryable


def test_an_error_message_is_always_one_line() -> None:
    assert str(ModelError("other", "line one\n  line two")) == "line one line two"


def test_backoff_doubles_up_to_the_limit_and_stops_after_the_last_retry() -> None:
    policy = RetryPolicy(retries=3, base_delay_s=1.0, max_delay_s=3.0)
    error = ModelError("overloaded", "x")
    delays = [policy.delay(error, attempt) for attempt in (1, 2, 3)]
    assert all(d is not None for d in delays)
    assert 0.75 <= delays[0] <= 1.0 and 1.5 <= delays[1] <= 2.0 and 2.25 <= delays[2] <= 3.0
    assert policy.delay(error, 4) is None
    assert policy.delay(ModelError("auth", "x"), 1) is None


def test_a_retry_after_longer_than_the_policy_accepts_is_not_waited_for() -> None:
    policy = RetryPolicy(max_retry_after_s=60)
    assert policy.delay(ModelError("rate_limit", "x", retry_after=5), 1) == 5
    assert policy.delay(ModelError("rate_limit", "x", retry_after=600), 1) is None


def test_retry_after_headers_are_read_in_milliseconds_or_seconds() -> None:
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds({}) is None


def test_results_sent_to_a_model_are_never_empty_and_errors_say_so() -> None:
    assert result_text(ToolResult("")) == "(no output)"
    assert result_text(ToolResult("boom", is_error=True)) == "Error: boom"
    assert result_text(ToolResult("Error: already", is_error=True)) == "Error: already"
    assert result_text(ToolResult("boom", is_error=True), mark_errors=False) == "boom"


async def test_a_client_that_cannot_be_built_is_a_config_model_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    slot = HttpClientSlot()
    with pytest.raises(ModelError) as info:
        await slot.get()
    await slot.close()
    assert info.value.kind == "config" and not info.value.retryable
    assert "HTTP client" in str(info.value)
