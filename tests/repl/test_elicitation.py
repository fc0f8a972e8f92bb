"""Elicitation forms: fields from the schema, typed answers, accept / decline / cancel."""

from __future__ import annotations

from typing import Any

import pytest

from cat_code.repl.elicitation import OMIT, default_text, fields_of, fill_form, parse_answer

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "subscribe": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 2},
        "email": {"type": "string", "format": "email"},
    },
    "required": ["name", "color"],
}


class Script:
    """Answers questions in order; records each question and its pre-filled default."""

    def __init__(self, *answers: str | type[BaseException]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []
        self.said: list[str] = []

    async def ask(self, prompt: str, default: str) -> str:
        self.asked.append((prompt, default))
        answer = self.answers.pop(0)
        if isinstance(answer, type):
            raise answer()
        return default if answer == "<enter>" else answer

    def say(self, line: str) -> None:
        self.said.append(line)


def test_fields_keep_the_servers_order_kinds_and_defaults() -> None:
    fields = fields_of(SCHEMA)
    assert [(f.name, f.kind, f.required) for f in fields] == [
        ("name", "string", True),
        ("age", "integer", False),
        ("subscribe", "boolean", False),
        ("color", "choice", True),
        ("size", "choice", False),
        ("tags", "multi", False),
        ("email", "string", False),
    ]
    assert [default_text(f) for f in fields][:3] == ["", "30", "yes"]
    assert fields[3].choices == [("r", "Red"), ("g", "Green")]
    assert fields[4].choices == [("s", "Small"), ("l", "l")]


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("age", "42", 42),
        ("subscribe", "no", False),
        ("color", "Green", "g"),
        ("color", "1", "r"),
        ("size", "small", "s"),
        ("tags", "a, c", ["a", "c"]),
        ("email", "", OMIT),
    ],
)
def test_answers_become_values_of_the_fields_type(name: str, raw: str, value: Any) -> None:
    field = next(f for f in fields_of(SCHEMA) if f.name == name)
    assert parse_answer(field, raw) == value


@pytest.mark.parametrize(
    ("name", "raw", "problem"),
    [
        ("name", "", "required"),
        ("name", "x", "at least 2"),
        ("age", "old", "whole number"),
        ("age", "200", "at most 150"),
        ("subscribe", "maybe", "yes or no"),
        ("color", "blue", "Red, Green"),
        ("tags", "a,b,c", "at most 2"),
        ("email", "nope", "email"),
    ],
)
def test_a_wrong_answer_says_what_is_wrong(name: str, raw: str, problem: str) -> None:
    field = next(f for f in fields_of(SCHEMA) if f.name == name)
    with pytest.raises(ValueError, match=problem):
        parse_answer(field, raw)


async def test_a_filled_and_accepted_form_sends_the_typed_content() -> None:
    script = Script("A", "Ann", "<enter>", "<enter>", "2", "", "b", "", "a")
    result = await fill_form(
        {"message": "Who are you?", "requestedSchema": SCHEMA},
        script.ask,
        script.say,
        server="demo",
    )
    assert result == {
        "action": "accept",
        "content": {"name": "Ann", "age": 30, "subscribe": True, "color": "g", "tags": ["b"]},
    }
    assert script.said[0] == "⏺ MCP server 'demo' asks: Who are you?"
    assert any("at least 2" in line for line in script.said)
    assert script.asked[2] == ("  age (integer ≥ 0 ≤ 150): ", "30")


async def test_ctrl_c_cancels_and_ctrl_d_declines() -> None:
    params = {"message": "m", "requestedSchema": SCHEMA}
    cancel = Script(KeyboardInterrupt)
    assert await fill_form(params, cancel.ask, cancel.say, server=None) == {"action": "cancel"}
    decline = Script("Ann", EOFError)
    assert await fill_form(params, decline.ask, decline.say, server=None) == {"action": "decline"}


async def test_the_final_question_can_decline_or_cancel_a_filled_form() -> None:
    params = {
        "message": "m",
        "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
    }
    for answer, action in (("d", "decline"), ("c", "cancel"), ("?", None)):
        script = Script("val", answer, "a") if action is None else Script("val", answer)
        result = await fill_form(params, script.ask, script.say, server=None)
        assert result["action"] == (action or "accept")
        assert ("content" in result) is (action is None)


URL_REQUEST = {"mode": "url", "url": "https://pay.example.com/x?y=1", "message": "Pay"}


class Browser:
    def __init__(self, available: bool = True) -> None:
        self.available = available
        self.opened: list[str] = []

    def __call__(self, url: str) -> bool:
        if self.available:
            self.opened.append(url)
        return self.available


async def test_a_url_request_shows_the_server_the_message_and_the_url_and_opens_after_a_yes() -> (
    None
):
    script, browser = Script("y"), Browser()
    result = await fill_form(URL_REQUEST, script.ask, script.say, server="pay", open_url=browser)
    assert result == {"action": "accept"}
    assert browser.opened == [URL_REQUEST["url"]]
    assert script.said[:3] == [
        "⏺ MCP server 'pay' asks you to open a web page: Pay",
        "  https://pay.example.com/x?y=1",
        "  site: example.com (host pay.example.com)",
    ]
    assert script.said[-1] == "  opened in your browser"


@pytest.mark.parametrize(
    ("answer", "action"), [("n", "decline"), ("c", "accept"), (KeyboardInterrupt, "cancel")]
)
async def test_a_url_is_never_opened_without_a_yes(
    answer: str | type[BaseException], action: str
) -> None:
    script, browser = Script(answer), Browser()
    result = await fill_form(URL_REQUEST, script.ask, script.say, server="pay", open_url=browser)
    assert result == {"action": action}
    assert browser.opened == []


async def test_with_no_browser_a_yes_prints_the_url_to_copy() -> None:
    script = Script("yes")
    result = await fill_form(
        URL_REQUEST, script.ask, script.say, server=None, open_url=Browser(available=False)
    )
    assert result == {"action": "accept"}
    assert script.said[-1] == "  no browser here; open it yourself: https://pay.example.com/x?y=1"


async def test_a_url_that_is_not_a_web_address_is_declined_without_asking() -> None:
    script, browser = Script(), Browser()
    request = {"mode": "url", "url": "javascript:alert(1)", "message": "Click"}
    result = await fill_form(request, script.ask, script.say, server="x", open_url=browser)
    assert result == {"action": "decline"}
    assert script.asked == [] and browser.opened == []


async def test_a_punycode_host_is_flagged_and_the_host_is_shown_apart() -> None:
    shown: list[tuple[str, str, str, str]] = []
    script = Script("n")
    request = {"mode": "url", "url": "https://xn--pple-43d.com:8443/a", "message": "Hi"}
    await fill_form(request, script.ask, script.say, server="x", show_url=shown.append)
    assert shown == [("https://", "", "xn--pple-43d.com", ":8443/a")]
    assert "  ⚠ the site's name uses look-alike (punycode or non-ASCII) characters" in script.said


@pytest.mark.parametrize(
    ("url", "why"),
    [
        (
            "https://attacker.example\\@accounts.google.com/signin",
            "it contains a backslash, which a browser reads otherwise than it looks",
        ),
        (
            "https://accounts.google.com@attacker.example/signin",
            "it has a user part (user@ before the host), which hides the real site",
        ),
        (
            "http://accounts.google.com/signin",
            "only https addresses are opened (http only on this machine)",
        ),
    ],
)
async def test_finding_8_a_url_whose_site_is_in_doubt_is_declined_unasked_saying_why(
    url: str, why: str
) -> None:
    script, browser = Script(), Browser()
    request = {"mode": "url", "url": url, "message": "Sign in to Google"}
    result = await fill_form(request, script.ask, script.say, server="x", open_url=browser)
    assert result == {"action": "decline"}
    assert script.asked == [] and browser.opened == []
    assert f"  not opened: {why}; declined" in script.said
    assert not any("site:" in line for line in script.said)


async def test_finding_8_the_site_shown_is_the_registrable_domain_of_the_host_visited() -> None:
    shown: list[tuple[str, str, str, str]] = []
    script = Script("n")
    url = "https://accounts.google.com.attacker.example/signin"
    request = {"mode": "url", "url": url, "message": "Sign in to Google"}
    await fill_form(request, script.ask, script.say, server="x", show_url=shown.append)
    assert shown == [("https://", "accounts.google.com.", "attacker.example", "/signin")]
    assert "  site: attacker.example (host accounts.google.com.attacker.example)" in script.said


async def test_http_on_this_machine_is_still_offered() -> None:
    script, browser = Script("y"), Browser()
    request = {"mode": "url", "url": "http://127.0.0.1:8123/callback", "message": "Local"}
    result = await fill_form(request, script.ask, script.say, server="x", open_url=browser)
    assert result == {"action": "accept"}
    assert browser.opened == ["http://127.0.0.1:8123/callback"]
    assert "  site: 127.0.0.1" in script.said
