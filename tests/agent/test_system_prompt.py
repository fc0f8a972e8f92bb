"""The system prompt names the working directory and carries server instructions, capped."""

from __future__ import annotations

from pathlib import Path

from cat_code.agent.system_prompt import MAX_INSTRUCTIONS_CHARS, build_system_prompt


def test_the_prompt_names_the_working_directory_and_the_mcp_naming() -> None:
    text = build_system_prompt(Path("/some/project"))
    assert "/some/project" in text and "mcp__<server>__<tool>" in text


def test_server_instructions_are_appended_and_cut_when_huge() -> None:
    text = build_system_prompt(Path("/p"), {"docs": "Use search first.", "big": "x" * 10_000})
    assert "Instructions from MCP server 'docs':\nUse search first." in text
    assert "x" * MAX_INSTRUCTIONS_CHARS + " …[cut]" in text
    assert "x" * (MAX_INSTRUCTIONS_CHARS + 1) not in text


def test_memory_files_come_with_their_paths_and_appended_text_comes_last(tmp_path: Path) -> None:
    from cat_code.agent.memory import load_memory

    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text("root claude")
    (tmp_path / "AGENTS.md").write_text("root agents")  # wins over CLAUDE.md beside it
    memory = load_memory(tmp_path, home)
    assert [m.path for m in memory] == [tmp_path / "AGENTS.md"]
    text = build_system_prompt(tmp_path, memory=memory, append="Last words.")
    assert f"Instructions from {tmp_path / 'AGENTS.md'}" in text and "root claude" not in text
    assert text.endswith("Last words.") and "edit_file" in text and "grep" in text


def test_each_memory_file_is_labelled_as_the_users_or_the_projects(tmp_path: Path) -> None:
    from cat_code.agent.memory import load_memory

    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    (home / "AGENTS.md").write_text("user rules")
    (project / "AGENTS.md").write_text("project rules")
    text = build_system_prompt(project, memory=load_memory(project, home))
    user, repository = home / "AGENTS.md", project.resolve() / "AGENTS.md"
    assert f"Instructions from {user} (the user's memory file; follow them):\nuser rules" in text
    assert (
        f"Instructions from {repository} (the project's memory file; follow them):\nproject rules"
    ) in text
