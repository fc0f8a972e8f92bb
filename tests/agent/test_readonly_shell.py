"""The read-only shell list of plan mode: what it lets through, and the hostile commands
that must never pass for reads."""

from __future__ import annotations

import pytest

from cat_code.agent.readonly_shell import is_read_only

READS = [
    "ls -la",
    "cat README.md | grep -n plan | head -5",
    "git status && git diff --stat",
    "git log --oneline -5; git show HEAD",
    "find . -name '*.py' -type f",
    "grep -rn 'a;b' src",
    "sed -n 1,20p src/app.py",
    "sort -n numbers.txt | uniq -c",
    "cd src && ls",
    "wc -l a.txt",
    'rg --pre-glob "*.gz" needle',
    "git branch -a",
]

WRITES = [
    "echo hi > file",
    "echo hi >> file",
    "cat a 2>&1",
    "ls >/dev/null",
    "sed -i s/a/b/ f",
    "sed --in-place=.bak s/a/b/ f",
    "sed -ni 's/a/b/p' f",
    "sed 's/a/b/w out' f",
    "sed -n '1w out' f",
    "sed 'e rm -rf /' f",
    "find . -delete",
    "find . -exec rm {} +",
    "find . -fprint out",
    "sort -o out in",
    "sort -no out in",
    "sort --output=out in",
    "sort --compress-program=sh in",
    "uniq in out",
    "tree -o out",
    "date -s 2020-01-01",
    "rg --pre ./evil needle",
    "ls; rm -rf /",
    "ls && rm -rf /",
    "ls || touch x",
    "cat x | tee y",
    "cat x | sh",
    "ls | xargs rm",
    "ls &",
    "(rm x)",
    "cat <(rm x)",
    "echo $(rm x)",
    "echo `rm x`",
    'echo "$(rm x)"',
    "ls\nrm x",
    "ls \\; rm x",
    'sort ";" ls -o out',
    "FOO=1 ls",
    "LD_PRELOAD=/tmp/x.so cat a",
    "/bin/rm x",
    "./script.sh",
    "rm x",
    "git -c core.pager=sh log",
    "git -C /elsewhere status",
    "git commit -m x",
    "git diff --output=out",
    "git grep -O/bin/sh x",
    "git branch -D main",
    "git reflog expire --all",
    "file -C -m magic",
    "env rm x",
    "xargs rm",
    "bash -c ls",
    "'unclosed",
    "",
    "   ",
    "{ rm x; }",
    "if true; then rm x; fi",
    'ls a"b;c"d',
]


@pytest.mark.parametrize("command", READS)
def test_commands_that_only_read_are_on_the_list(command: str) -> None:
    assert is_read_only(command)


@pytest.mark.parametrize("command", WRITES)
def test_commands_that_write_or_hide_a_second_command_are_refused(command: str) -> None:
    assert not is_read_only(command)
