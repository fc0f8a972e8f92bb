"""``python -m cat_code`` is the ``cat-code`` command."""

from cat_code.cli import run

raise SystemExit(run())
