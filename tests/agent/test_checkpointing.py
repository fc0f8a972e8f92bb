"""The agent takes checkpoints before each prompt's first change (and only then), notes the
tree after the turn, and knows where each prompt began in the conversation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cat_code.agent.checkpointing import Checkpointer, prune_gone_sessions
from cat_code.agent.loop import Agent
from cat_code.agent.permissions import Permissions
from cat_code.agent.providers.fake import ScriptedProvider, reply, use_tools
from cat_code.host.state.checkpoints import CheckpointStore
from cat_code.tools.builtin import builtin_tools
from cat_code.tools.registry import ToolRegistry


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    return repo


def agent_in(repo: Path, home: Path, *responses: object) -> tuple[Agent, Checkpointer]:
    agent = Agent(
        ScriptedProvider(list(responses)),  # type: ignore[arg-type]
        ToolRegistry(builtin_tools(repo)),
        permissions=Permissions(approve_all=True),
    )
    agent.checkpoints = Checkpointer(CheckpointStore(repo, "s1", home))
    return agent, agent.checkpoints


async def test_a_prompt_that_only_reads_takes_no_checkpoint_and_one_that_runs_shell_does(
    repo: Path, tmp_path: Path
) -> None:
    agent, checkpointer = agent_in(
        repo,
        tmp_path / "home",
        use_tools(("read_file", {"path": "a.txt"})),
        reply("read it"),
        use_tools(("shell", {"command": "printf 'two\\n' > a.txt"})),
        reply("rewrote it"),
    )
    await agent.run("read a.txt")
    assert checkpointer.store.checkpoints == []
    await agent.run("rewrite a.txt")
    [checkpoint] = checkpointer.store.checkpoints
    assert checkpoint.number == 2 and checkpoint.end_tree is not None
    assert (repo / "a.txt").read_text() == "two\n"
    assert [m.number for m in checkpointer.prompts] == [1, 2]
    assert checkpointer.checkpoint_for(checkpointer.prompts[0]) is checkpoint

    restored = await checkpointer.store.restore(checkpoint)
    assert restored.written == ["a.txt"] and (repo / "a.txt").read_text() == "one\n"
    before = checkpointer.conversation_before(checkpointer.prompts[1], agent.messages)
    assert before is not None and len(before) == 4  # prompt, tool use, results, answer
    assert checkpointer.conversation_before(checkpointer.prompts[0], agent.messages) == []


async def test_a_conversation_that_was_cleared_since_cannot_be_rewound_there(
    repo: Path, tmp_path: Path
) -> None:
    agent, checkpointer = agent_in(repo, tmp_path / "home", reply("hi"))
    await agent.run("hello")
    agent.clear()
    assert checkpointer.conversation_before(checkpointer.prompts[0], agent.messages) is None


async def test_outside_git_the_file_tools_targets_are_saved_before_they_change(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "b.txt").write_text("before\n")
    agent, checkpointer = agent_in(
        folder,
        tmp_path / "home",
        use_tools(("read_file", {"path": "b.txt"})),  # a file is read before it is written
        use_tools(("write_file", {"path": "b.txt", "content": "after\n"})),
        reply("written"),
    )
    await agent.run("change b")
    assert not checkpointer.store.covers_shell
    assert (folder / "b.txt").read_text() == "after\n"
    [checkpoint] = checkpointer.store.checkpoints
    await checkpointer.store.restore(checkpoint)
    assert (folder / "b.txt").read_text() == "before\n"


async def test_checkpoints_of_a_session_whose_file_is_gone_are_removed_at_start(
    repo: Path, cat_code_home: Path
) -> None:
    gone = CheckpointStore(repo, "gone-session", cat_code_home)
    kept = CheckpointStore(repo, "kept-session", cat_code_home)
    await gone.snapshot(1, "old")
    await kept.snapshot(1, "kept")
    await gone.settled()
    await kept.settled()
    saved = cat_code_home / "sessions" / "some-folder" / "kept-session.jsonl"
    saved.parent.mkdir(parents=True)
    saved.write_text("{}\n")

    class Current:
        session_id = "current"
        cwd = repo

    assert await prune_gone_sessions(Current()) == ["gone-session"]
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/cat-code/").split()
    assert refs == ["refs/cat-code/checkpoints/kept-session/1"]
    assert not (repo / ".git" / "cat-code-index-gone-session").exists()
