"""`mask_args`: header lines and scheme credentials on a command line are masked."""

from __future__ import annotations

from cat_code.host.config.masking import mask_args, masked_target


def test_a_header_options_value_is_masked_separate_or_joined() -> None:
    args = ["--header", "Authorization: Bearer ghp_x", "-H", "X-Api-Key: k1", "--header=Cookie: c"]

    assert mask_args(args) == [
        "--header", "Authorization: ****", "-H", "X-Api-Key: ****", "--header=Cookie: ****",
    ]  # fmt: skip


def test_a_secret_named_header_or_a_bearer_credential_anywhere_is_masked() -> None:
    args = ["Authorization: Bearer ghp_y", "run Bearer abc now", "localhost:8080", "note: x"]

    assert mask_args(args) == ["Authorization: ****", "run Bearer **** now", "localhost:8080",
                               "note: x"]  # fmt: skip


def test_variable_references_stay_as_written() -> None:
    args = ["-H", "Authorization: Bearer ${TOKEN}", "--auth", "Bearer ${T}"]

    assert mask_args(args) == ["-H", "Authorization: Bearer ${TOKEN}", "--auth", "Bearer ${T}"]


def test_the_target_of_an_entry_with_a_literal_token_never_shows_it() -> None:
    entry = {"command": "npx", "args": ["srv", "--header", "Authorization: Bearer ghp_z"]}

    assert masked_target(entry) == "npx srv --header 'Authorization: ****'"
