"""How the real ``cat-code`` writes its own files: concurrent edits all land (R1), a
symlinked settings file stays a link (R5), unusable input is refused by name (R6), and
``$CAT_CODE_HOME`` is private (S5)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from conftest import REPO

#: Concurrent ``mcp add`` processes into one file (the review lost 10–12 of 16).
WRITERS = 16


def _env(cat_home: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update({"HOME": str(home), "CAT_CODE_HOME": str(cat_home)})
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _start(args: list[str | bytes], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "cat_code", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _finish(process: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_concurrent_mcp_add_that_says_added_is_in_the_file(tmp_path: Path) -> None:
    home, cat_home = tmp_path, tmp_path / ".cat-code"
    env = _env(cat_home, home)
    processes = [
        _start(["mcp", "add", f"s{i}", "--", "/bin/true"], tmp_path, env) for i in range(WRITERS)
    ]
    results = [_finish(p) for p in processes]
    for code, out, err in results:
        assert code == 0 and "Added stdio server" in out, (out, err)
    servers = json.loads((cat_home / "mcp.json").read_text())["mcpServers"]
    assert sorted(servers) == sorted(f"s{i}" for i in range(WRITERS))


_ALLOW = """
import sys
from pathlib import Path
from cat_code.host.state.settings import update_settings
path, count, tag = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for n in range(count):
    update_settings(path, lambda s: s.setdefault("allow", []).append(f"{tag}{n}"))
"""


def test_two_concurrent_settings_updates_both_land(tmp_path: Path) -> None:
    settings = tmp_path / ".cat-code" / "settings.json"
    env = _env(settings.parent, tmp_path)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _ALLOW, str(settings), "25", tag],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for tag in ("a", "b")
    ]
    for writer in writers:
        code, _, err = _finish(writer)
        assert code == 0, err
    allowed = json.loads(settings.read_text())["allow"]
    assert sorted(allowed) == sorted(f"{t}{n}" for t in "ab" for n in range(25))


def test_a_symlinked_settings_file_is_written_through_the_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "cat-code-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"theme": "dark"}\n')
    cat_home = tmp_path / ".cat-code"
    cat_home.mkdir(mode=0o700)
    (cat_home / "settings.json").symlink_to(dotfiles)
    env = _env(cat_home, tmp_path)
    code, _, err = _finish(
        subprocess.Popen(
            [sys.executable, "-c", _ALLOW, str(cat_home / "settings.json"), "1", "x"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    )
    assert code == 0, err
    assert (cat_home / "settings.json").is_symlink()
    assert json.loads(dotfiles.read_text()) == {"theme": "dark", "allow": ["x0"]}


def test_a_config_nested_too_deeply_is_named_not_a_crash(tmp_path: Path) -> None:
    cat_home = tmp_path / ".cat-code"
    cat_home.mkdir(mode=0o700)
    deep = '{"mcpServers": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    (cat_home / "mcp.json").write_text(deep)
    env = _env(cat_home, tmp_path)
    _, _, err = _finish(_start(["mcp", "list"], tmp_path, env))
    assert "RecursionError" not in err and "Traceback" not in err
    assert f"{cat_home / 'mcp.json'}: not an MCP config (nested more than 100" in err
    code, _, err = _finish(_start(["mcp", "add", "x", "--", "/bin/true"], tmp_path, env))
    assert code == 1 and "Traceback" not in err, err
    assert f"{cat_home / 'mcp.json'}: not a config file (nested more than 100" in err
    assert (cat_home / "mcp.json").read_text() == deep  # nothing written


def test_a_deeply_nested_settings_file_is_named_not_a_crash(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("[" * 100_000 + "]" * 100_000)
    from cat_code.host.state.settings import SettingsError, read_settings

    try:
        read_settings(settings)
    except SettingsError as exc:
        assert exc.path == settings and "nested more than 100 levels" in exc.problem
    else:
        raise AssertionError("no SettingsError")


def test_an_argument_that_is_not_utf8_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    cat_home = tmp_path / ".cat-code"
    env = _env(cat_home, tmp_path)
    code, _, err = _finish(
        _start(["mcp", "add", "x", "--", "/bin/true", b"caf\xe9.txt"], tmp_path, env)
    )
    assert code == 1 and "Traceback" not in err, err
    assert "argument 'caf\\xe9.txt' is not valid UTF-8" in err
    assert not (cat_home / "mcp.json").exists()


def test_cat_code_home_is_private_and_so_is_every_file_written_there(tmp_path: Path) -> None:
    cat_home = tmp_path / "fresh" / ".cat-code"
    env = _env(cat_home, tmp_path)
    code, _, err = _finish(
        _start(["mcp", "add", "echo", "--", sys.executable, "-c", "pass"], tmp_path, env)
    )
    assert code == 0, err
    for script in (
        "from cat_code.host.state.settings import update_settings, user_settings_path\n"
        "update_settings(user_settings_path(), lambda s: s.update(a=1))",
        "from cat_code.host.mcp_tools.output_policy import save_output\n"
        "save_output(b'x', server='s', tool='t', suffix='.txt')",
        "from cat_code.mcp.session.detect import EraMemory\n"
        "from cat_code.host.state.home import cat_code_home\n"
        "EraMemory(cat_code_home() / 'eras.json').remember('k', 'modern')",
    ):
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    assert _mode(cat_home) == 0o700
    folders = [p for p in cat_home.rglob("*") if p.is_dir()]
    files = [p for p in cat_home.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"mcp.json", "settings.json", "eras.json"}
    assert all(_mode(p) == 0o700 for p in folders), [(p, oct(_mode(p))) for p in folders]
    assert all(_mode(p) == 0o600 for p in files), [(p, oct(_mode(p))) for p in files]
