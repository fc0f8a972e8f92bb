"""`FileTokenStore`: credentials.json on disk, its modes, its lock, and a corrupt file."""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cat_code.host.state.home import token_store
from cat_code.mcp.auth import store as store_module
from cat_code.mcp.auth.store import CredentialsLocked, FileTokenStore, MemoryTokenStore
from cat_code.mcp.auth.types import ClientRegistration, Tokens

SERVER = "https://mcp.example.com/mcp"
OTHER = "https://other.example.com/mcp"
ISSUER = "https://auth.example.com"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_default_file_is_credentials_json_in_cat_code_home(cat_code_home: Path) -> None:
    assert token_store().path == cat_code_home / "credentials.json"


def test_tokens_and_registrations_round_trip_in_the_documented_shape(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "home" / "credentials.json")
    assert store.tokens(SERVER) is None
    store.save_tokens(SERVER, Tokens(access_token="at-1", refresh_token="rt-1", expires_at=5.0))
    registration = ClientRegistration(issuer=ISSUER, client_id="cid", redirect_uris=("u",))
    store.save_registration(registration)

    again = FileTokenStore(store.path)  # a second process sees the same
    tokens = again.tokens(SERVER)
    assert tokens is not None
    assert (tokens.access_token, tokens.refresh_token, tokens.expires_at) == ("at-1", "rt-1", 5.0)
    registration = again.registration(ISSUER)
    assert registration is not None and registration.client_id == "cid"
    assert registration.redirect_uris == ("u",)
    data = json.loads(store.path.read_text())
    assert set(data) == {"servers", "clients"}
    assert data["servers"][SERVER]["access_token"] == "at-1"
    assert data["clients"][ISSUER]["client_id"] == "cid"


def test_forget_drops_one_servers_tokens_and_keeps_the_rest(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "credentials.json")
    store.save_tokens(SERVER, Tokens(access_token="a"))
    store.save_tokens(OTHER, Tokens(access_token="b"))
    store.save_registration(ClientRegistration(issuer=ISSUER, client_id="cid"))
    store.forget(SERVER)
    store.forget("https://never.example.com")  # nothing there: fine
    assert store.tokens(SERVER) is None
    assert store.tokens(OTHER) is not None
    assert store.registration(ISSUER) is not None


def test_the_file_is_0600_in_a_0700_folder_and_loose_modes_are_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    path = folder / "credentials.json"
    path.write_text("{}")
    path.chmod(0o644)
    store = FileTokenStore(path)
    store.save_tokens(SERVER, Tokens(access_token="a"))
    assert _mode(path) == 0o600
    assert _mode(folder) == 0o700
    assert _mode(store.lock_path) == 0o600
    fresh = FileTokenStore(tmp_path / "new" / "deeper" / "credentials.json")
    fresh.save_tokens(SERVER, Tokens(access_token="a"))
    assert _mode(fresh.path) == 0o600 and _mode(fresh.path.parent) == 0o700


def test_reads_see_what_another_writer_wrote_since(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    reader, writer = FileTokenStore(path), FileTokenStore(path)
    writer.save_tokens(SERVER, Tokens(access_token="old"))
    assert reader.tokens(SERVER).access_token == "old"  # type: ignore[union-attr]
    writer.save_tokens(SERVER, Tokens(access_token="new"))
    assert reader.tokens(SERVER).access_token == "new"  # type: ignore[union-attr]


def test_a_corrupt_file_warns_once_is_empty_and_is_moved_aside_not_wiped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "credentials.json"
    path.write_text('{"servers": {"https://x": {"access_token": "keep-me"')
    path.chmod(0o600)
    store = FileTokenStore(path)
    with caplog.at_level(logging.WARNING):
        assert store.tokens(SERVER) is None
        assert store.registration(ISSUER) is None
        assert store.tokens(OTHER) is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"{path} is not valid JSON; ignoring it — sign in again"]

    store.save_tokens(SERVER, Tokens(access_token="a"))
    assert store.tokens(SERVER) is not None
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("credentials.json.invalid-")]
    assert len(kept) == 1 and "keep-me" in kept[0].read_text()
    assert _mode(kept[0]) == 0o600


def test_an_unusable_entry_is_ignored_without_losing_the_others(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"servers": {SERVER: {"nope": 1}, OTHER: {"access_token": "b"}}}))
    store = FileTokenStore(path)
    assert store.tokens(SERVER) is None
    assert store.tokens(OTHER) is not None


def test_no_temporary_files_are_left_behind(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "credentials.json")
    for i in range(5):
        store.save_tokens(f"{SERVER}{i}", Tokens(access_token=str(i)))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["credentials.json", "credentials.json.lock"]


async def test_locked_is_one_at_a_time_in_process_and_writes_inside_it_work(
    tmp_path: Path,
) -> None:
    store = FileTokenStore(tmp_path / "credentials.json")
    order: list[str] = []
    inside = asyncio.Event()

    async def first() -> None:
        async with store.locked(SERVER):
            order.append("first in")
            inside.set()
            await asyncio.sleep(0.05)
            store.save_tokens(SERVER, Tokens(access_token="from-first"))
            order.append("first out")

    async def second() -> None:
        await inside.wait()
        async with store.locked(SERVER):
            order.append("second in")
            assert store.tokens(SERVER).access_token == "from-first"  # type: ignore[union-attr]

    async with asyncio.timeout(5):
        await asyncio.gather(first(), second())
    assert order == ["first in", "first out", "second in"]


_HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from cat_code.mcp.auth.store import FileTokenStore
    from cat_code.mcp.auth.types import Tokens

    async def main():
        store = FileTokenStore(Path(sys.argv[1]))
        async with store.locked(sys.argv[2]):  # a refresh waiting on the network
            print("held", flush=True)
            sys.stdin.readline()
            store.save_tokens(sys.argv[2], Tokens(access_token="refreshed"))

    asyncio.run(main())
    """
)


class _Refresh:
    """Another cat-code process, in the middle of refreshing ``server``'s tokens."""

    def __init__(self, path: Path, server: str) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path), server],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )

    async def started(self) -> None:
        assert self._proc.stdout is not None
        async with asyncio.timeout(30):
            assert await asyncio.to_thread(self._proc.stdout.readline) == "held\n"

    async def finish(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write("go\n")
        self._proc.stdin.flush()
        async with asyncio.timeout(30):
            assert await asyncio.to_thread(self._proc.wait) == 0

    def end(self) -> None:
        self._proc.kill()
        self._proc.wait()
        self._proc.stdin.close()  # type: ignore[union-attr]
        self._proc.stdout.close()  # type: ignore[union-attr]


async def test_locked_waits_for_another_process_without_blocking_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    other = _Refresh(path, SERVER)
    try:
        await other.started()
        store = FileTokenStore(path)
        got = asyncio.Event()

        async def take() -> None:
            async with store.locked(SERVER):
                got.set()
                # Inside the lock, the other process's refresh is visible.
                assert store.tokens(SERVER).access_token == "refreshed"  # type: ignore[union-attr]

        waiter = asyncio.create_task(take())
        ticks = 0
        for _ in range(10):  # the loop keeps running while the lock is elsewhere
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 10 and not got.is_set()
        await other.finish()
        async with asyncio.timeout(5):
            await waiter
        assert got.is_set()
    finally:
        other.end()


async def test_a_refresh_in_another_process_never_holds_up_a_write_here(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    other = _Refresh(path, SERVER)
    try:
        await other.started()
        store = FileTokenStore(path)
        # Writes take the short write lock only, not the refresh's: no wait, no error.
        store.save_tokens(OTHER, Tokens(access_token="signed-in-meanwhile"))
        store.save_tokens(SERVER, Tokens(access_token="signed-in-here"))
        store.save_registration(ClientRegistration(issuer=ISSUER, client_id="cid"))
        assert store.tokens(OTHER).access_token == "signed-in-meanwhile"  # type: ignore[union-attr]
        assert store.registration(ISSUER) is not None
        await other.finish()
        # The refresh's own write kept what was written meanwhile.
        assert store.tokens(SERVER).access_token == "refreshed"  # type: ignore[union-attr]
        assert store.tokens(OTHER).access_token == "signed-in-meanwhile"  # type: ignore[union-attr]
        assert store.registration(ISSUER) is not None
    finally:
        other.end()


async def test_a_refresh_of_one_server_never_holds_up_a_refresh_of_another(
    tmp_path: Path,
) -> None:
    path = tmp_path / "credentials.json"
    other = _Refresh(path, SERVER)
    try:
        await other.started()
        store = FileTokenStore(path)
        assert store.refresh_lock_path(SERVER) != store.refresh_lock_path(OTHER)
        assert SERVER not in store.refresh_lock_path(SERVER).name
        async with asyncio.timeout(5), store.locked(OTHER):
            store.save_tokens(OTHER, Tokens(access_token="b"))
        await other.finish()
    finally:
        other.end()


async def test_waiting_for_another_processs_refresh_is_bounded_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "credentials.json"
    monkeypatch.setattr(store_module, "LOCK_WAIT_S", 0.05)
    other = _Refresh(path, SERVER)
    try:
        await other.started()
        with pytest.raises(CredentialsLocked, match="held by another cat-code for more than"):
            async with asyncio.timeout(5), FileTokenStore(path).locked(SERVER):
                pytest.fail("the lock is the other process's")
        await other.finish()
    finally:
        other.end()


def test_waiting_for_the_write_lock_is_bounded_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileTokenStore(tmp_path / "credentials.json")
    store.save_tokens(SERVER, Tokens(access_token="before"))
    monkeypatch.setattr(store_module, "WRITE_LOCK_WAIT_S", 0.05)
    fd = os.open(store.lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a writer that hangs mid-write
        with pytest.raises(CredentialsLocked, match=r"credentials\.json\.lock is held"):
            store.save_tokens(SERVER, Tokens(access_token="after"))
    finally:
        os.close(fd)
    assert store.tokens(SERVER).access_token == "before"  # type: ignore[union-attr]


def test_a_symlink_at_the_path_or_a_lock_is_replaced_never_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target, lock_target = elsewhere / "target.json", elsewhere / "lock-target"
    target.write_text("{}")
    target.chmod(0o644)
    folder = tmp_path / "home"
    folder.mkdir()
    store = FileTokenStore(folder / "credentials.json")
    store.path.symlink_to(target)
    store.lock_path.symlink_to(lock_target)
    store.tokens(SERVER)
    store.save_tokens(SERVER, Tokens(access_token="a"))
    assert not store.path.is_symlink() and not store.lock_path.is_symlink()
    assert store.tokens(SERVER) is not None
    assert target.read_text() == "{}" and _mode(target) == 0o644
    assert not lock_target.exists()


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from cat_code.mcp.auth.store import FileTokenStore
    from cat_code.mcp.auth.types import Tokens

    store = FileTokenStore(Path(sys.argv[1]))
    for i in range(40):
        store.save_tokens(f"https://{sys.argv[2]}.example.com/{i}", Tokens(access_token="t"))
    """
)


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), who], env=env)
        for who in ("a", "b")
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    servers = json.loads(path.read_text())["servers"]
    assert len(servers) == 80


async def test_the_memory_store_keeps_the_same_contract() -> None:
    store = MemoryTokenStore()
    store.save_tokens(SERVER, Tokens(access_token="a"))
    async with store.locked(SERVER):
        assert store.tokens(SERVER) is not None
    store.forget(SERVER)
    assert store.tokens(SERVER) is None


@pytest.mark.parametrize("kind", ["file", "memory"])
def test_a_dpop_key_is_kept_per_server_and_the_first_one_saved_wins(
    tmp_path: Path, kind: str
) -> None:
    store = FileTokenStore(tmp_path / "credentials.json") if kind == "file" else MemoryTokenStore()
    assert store.dpop_key(SERVER) is None
    assert store.save_dpop_key(SERVER, "PEM-1") == "PEM-1"
    # Another process made one meanwhile: its key (and the tokens bound to it) stays.
    assert store.save_dpop_key(SERVER, "PEM-2") == "PEM-1"
    assert store.dpop_key(SERVER) == "PEM-1" and store.dpop_key(OTHER) is None
    assert store.save_dpop_key(SERVER, "PEM-3", replace=True) == "PEM-3"
    # Tokens come and go (a sign-out, a refused refresh); the key stays.
    store.save_tokens(SERVER, Tokens(access_token="a", token_type="DPoP"))
    store.forget(SERVER)
    assert store.dpop_key(SERVER) == "PEM-3"


def test_dpop_keys_live_in_the_0600_file_beside_tokens_only_once_one_exists(
    tmp_path: Path,
) -> None:
    path = tmp_path / "home" / "credentials.json"
    store = FileTokenStore(path)
    store.save_tokens(SERVER, Tokens(access_token="at-1"))
    assert set(json.loads(path.read_text())) == {"servers", "clients"}
    store.save_dpop_key(SERVER, "-----BEGIN PRIVATE KEY-----\nk\n-----END PRIVATE KEY-----\n")
    data = json.loads(path.read_text())
    assert data["dpop_keys"] == {SERVER: store.dpop_key(SERVER)}
    assert data["servers"][SERVER]["access_token"] == "at-1"
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert FileTokenStore(path).dpop_key(SERVER) == store.dpop_key(SERVER)


def test_a_dpop_keys_section_of_the_wrong_shape_is_no_key(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"servers": {}, "clients": {}, "dpop_keys": ["x"]}))
    store = FileTokenStore(path)
    assert store.dpop_key(SERVER) is None
    assert store.save_dpop_key(SERVER, "PEM") == "PEM"
