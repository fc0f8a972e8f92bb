"""`ConfigFile`: one entry changed on disk, every other byte of the file as it was."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from cat_code.host.config.edit import ConfigEditError, ConfigFile
from cat_code.host.config.load import load_config

ECHO = {"command": "python3", "args": ["examples/echo_server.py"]}

#: A hand-written file: odd spacing, keys cat-code does not know, a nested entry.
HAND_WRITTEN = """{
    "theme":   "dark",
    "mcpServers": {
        "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                    "env": { "GITHUB_TOKEN": "${GITHUB_TOKEN}" } },
        "remote": {
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"}
        }
    },
    "editor": {"tabSize": 4, "rulers": [80, 100]},
    "ünïcode": "kept as written ✓"
}
"""


def edit(path: Path, text: str | None) -> ConfigFile:
    if text is not None:
        path.write_bytes(text.encode("utf-8"))
    return ConfigFile.read(path)


def common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def inserted(old: str, new: str) -> str:
    """What ``new`` adds to ``old`` at one place; fails unless ``old`` survives around it."""
    prefix = common_prefix(old, new)
    suffix = common_prefix(old[prefix:][::-1], new[prefix:][::-1])
    assert prefix + suffix == len(old), "bytes outside the edit changed"
    return new[prefix : len(new) - suffix]


def test_adding_an_entry_keeps_every_other_byte_and_the_file_style(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    file = edit(path, HAND_WRITTEN)

    file.set_entry("echo", ECHO)
    file.write()

    new = path.read_text(encoding="utf-8")
    added = inserted(HAND_WRITTEN, new)
    assert added == (
        ',\n        "echo": {\n            "command": "python3",\n'
        '            "args": ["examples/echo_server.py"]\n        }'
    )
    data = json.loads(new)
    assert list(data) == ["theme", "mcpServers", "editor", "ünïcode"]
    assert list(data["mcpServers"]) == ["github", "remote", "echo"]
    assert data["mcpServers"]["echo"] == ECHO
    assert load_config([path]).order == ["github", "remote", "echo"]


def test_replacing_an_entry_changes_only_its_value(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    file = edit(path, HAND_WRITTEN)

    file.set_entry("github", {"command": "gh-mcp"})
    file.write()

    new = path.read_text(encoding="utf-8")
    start = HAND_WRITTEN.index('{ "command": "npx"')
    end = HAND_WRITTEN.index("} },") + 3
    assert (
        new
        == HAND_WRITTEN[:start]
        + '{\n            "command": "gh-mcp"\n        }'
        + (HAND_WRITTEN[end:])
    )


def test_removing_the_first_middle_and_last_entries(tmp_path: Path) -> None:
    text = '{\n  "mcpServers": {\n    "a": {"command": "a"},\n    "b": {"command": "b"},\n' \
           '    "c": {"command": "c"}\n  },\n  "x": 1\n}\n'  # fmt: skip
    path = tmp_path / "mcp.json"
    for name, gone in [
        ("a", '"a": {"command": "a"},\n    '),
        ("b", ',\n    "b": {"command": "b"}'),
        ("c", ',\n    "c": {"command": "c"}'),
    ]:
        file = edit(path, text)
        assert file.remove_entry(name) is True
        file.write()
        new = path.read_text()
        assert new == text.replace(gone, "", 1)
        assert list(json.loads(new)["mcpServers"]) == [n for n in "abc" if n != name]


def test_removing_the_only_entry_leaves_an_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    file = edit(path, '{\n  "mcpServers": {\n    "a": {"command": "a"}\n  },\n  "x": [1, 2]\n}')
    file.remove_entry("a")
    file.write()
    assert path.read_text() == '{\n  "mcpServers": {},\n  "x": [1, 2]\n}'


def test_removing_a_duplicated_name_removes_every_copy(tmp_path: Path) -> None:
    # json keeps the last of duplicate keys: removing only that would revive the first.
    path = tmp_path / "mcp.json"
    file = edit(path, '{"mcpServers": {"a": {"command": "1"}, "b": {"command": "b"}, '
                      '"a": {"command": "2"}}}')  # fmt: skip
    assert file.remove_entry("a") is True
    file.write()
    assert path.read_text() == '{"mcpServers": {"b": {"command": "b"}}}'


def test_removing_a_name_that_is_not_there_changes_nothing(tmp_path: Path) -> None:
    file = edit(tmp_path / "mcp.json", HAND_WRITTEN)
    assert file.remove_entry("nope") is False
    assert file.text == HAND_WRITTEN and not file.changed


def test_a_one_line_file_stays_on_one_line(tmp_path: Path) -> None:
    text = '{"mcpServers": {"a": {"command": "a"}}, "other": true}'
    path = tmp_path / "mcp.json"
    file = edit(path, text)
    file.set_entry("b", {"url": "http://127.0.0.1:1/mcp", "type": "http"})
    file.set_field("a", "disabled", True)
    file.write()
    assert path.read_text() == (
        '{"mcpServers": {"a": {"command": "a", "disabled": true}, '
        '"b": {"url": "http://127.0.0.1:1/mcp", "type": "http"}}, "other": true}'
    )


def test_tabs_crlf_and_a_byte_order_mark_are_kept(tmp_path: Path) -> None:
    text = '\ufeff{\r\n\t"mcpServers": {\r\n\t\t"a": {"command": "a"}\r\n\t}\r\n}\r\n'
    path = tmp_path / "mcp.json"
    file = edit(path, text)
    file.set_entry("b", {"command": "b", "args": []})
    file.write()
    assert path.read_bytes().decode("utf-8") == (
        '\ufeff{\r\n\t"mcpServers": {\r\n\t\t"a": {"command": "a"},\r\n'
        '\t\t"b": {\r\n\t\t\t"command": "b",\r\n\t\t\t"args": []\r\n\t\t}\r\n\t}\r\n}\r\n'
    )


def test_a_file_without_mcp_servers_gets_the_key_at_its_end(tmp_path: Path) -> None:
    text = '{\n  "theme": "dark",\n  "n": 1\n}\n'
    path = tmp_path / "mcp.json"
    file = edit(path, text)
    file.set_entry("a", {"command": "a"})
    file.write()
    assert inserted(text, path.read_text()) == (
        ',\n  "mcpServers": {\n    "a": {\n      "command": "a"\n    }\n  }'
    )


def test_an_empty_servers_object_is_filled_in_the_files_indentation(tmp_path: Path) -> None:
    text = '{\n    "mcpServers": {}\n}\n'
    path = tmp_path / "mcp.json"
    file = edit(path, text)
    file.set_entry("a", {"command": "a"})
    file.write()
    assert path.read_text() == (
        '{\n    "mcpServers": {\n        "a": {\n            "command": "a"\n        }\n    }\n}\n'
    )


def test_setting_a_field_replaces_it_or_adds_it_to_the_entry(tmp_path: Path) -> None:
    text = '{\n  "mcpServers": {\n    "a": {\n      "command": "a",\n      "disabled": false\n' \
           '    },\n    "b": {\n      "command": "b"\n    }\n  }\n}\n'  # fmt: skip
    path = tmp_path / "mcp.json"
    file = edit(path, text)
    file.set_field("a", "disabled", True)
    file.set_field("b", "disabled", True)
    file.write()
    new = path.read_text()
    assert new == text.replace('"disabled": false', '"disabled": true').replace(
        '"command": "b"\n', '"command": "b",\n      "disabled": true\n'
    )
    with pytest.raises(KeyError):
        file.set_field("nope", "disabled", True)


def test_a_missing_file_and_folder_are_created(tmp_path: Path) -> None:
    path = tmp_path / "new-home" / "mcp.json"
    file = ConfigFile.read(path)
    assert not file.exists and file.servers == {}
    file.set_entry("echo", ECHO)
    file.write()
    assert json.loads(path.read_text()) == {"mcpServers": {"echo": ECHO}}
    assert path.read_text().endswith("}\n")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_new_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    # `mcp add --header` and `mcp import` may write literal tokens into it.
    path = tmp_path / "mcp.json"
    previous = os.umask(0o022)
    try:
        file = ConfigFile.read(path)
        file.set_entry("echo", ECHO)
        file.write()
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "mcpServers": {\n    "a": {"command": "a",}\n  }\n}\n', ":3:"),
        ('["not", "an object"]', "must hold a JSON object"),
        ('{"mcpServers": ["a"]}', "'mcpServers' must be an object"),
    ],
)
def test_a_file_that_is_not_a_config_is_refused_naming_it(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(text)
    with pytest.raises(ConfigEditError) as caught:
        ConfigFile.read(path)
    assert str(caught.value).startswith(str(path))
    assert message in str(caught.value)
    assert "nothing was changed" in str(caught.value)
    assert path.read_text() == text


def test_the_write_keeps_the_mode_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {}}')
    path.chmod(0o600)
    file = ConfigFile.read(path)
    file.set_entry("a", {"command": "a"})
    file.write()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]


def test_the_users_file_left_open_by_an_old_version_is_written_private(
    cat_code_home: Path, tmp_path: Path
) -> None:
    for path in (cat_code_home / "mcp.json", tmp_path / "project" / ".mcp.json"):
        path.parent.mkdir(exist_ok=True)
        path.write_text('{"mcpServers": {}}')
        path.chmod(0o644)
        file = ConfigFile.read(path)
        file.set_entry("a", {"command": "a"})
        file.write()
    assert stat.S_IMODE((cat_code_home / "mcp.json").stat().st_mode) == 0o600
    # A project's file is the project's: its mode is kept.
    assert stat.S_IMODE((tmp_path / "project" / ".mcp.json").stat().st_mode) == 0o644


def test_a_symlinked_file_is_written_through_the_link(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}')
    link = tmp_path / "mcp.json"
    link.symlink_to(real)
    file = ConfigFile.read(link)
    file.set_entry("a", {"command": "a"})
    file.write()
    assert link.is_symlink()
    assert json.loads(real.read_text()) == {"mcpServers": {"a": {"command": "a"}}}


def test_a_file_changed_by_someone_else_since_it_was_read_is_not_overwritten(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {}}')
    file = ConfigFile.read(path)
    file.set_entry("a", {"command": "a"})
    path.write_text('{"mcpServers": {"theirs": {"command": "t"}}}')

    with pytest.raises(ConfigEditError, match="changed while cat-code was editing it"):
        file.write()

    assert path.read_text() == '{"mcpServers": {"theirs": {"command": "t"}}}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]
