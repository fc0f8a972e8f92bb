"""Output a terminal cannot encode is escaped, never an error.

Under a legacy locale (``LC_ALL=C`` with Python's UTF-8 mode off, ``PYTHONIOENCODING=ascii``,
a Latin-1 terminal) stdout and stderr encode strictly, and the first ``é`` a model or a
server writes raised ``UnicodeEncodeError`` in the middle of a run, blamed on the model.
`tolerate_unencodable_output` is called once at start-up, before anything is printed: a
stream whose encoding is not a UTF one is reconfigured with the error handler `ESCAPE`,
which writes each character it cannot encode as JSON's ``\\uXXXX`` (a surrogate pair
beyond U+FFFF). That one escape reads plainly in text, and keeps ``--output-format json``
and ``stream-json`` valid JSON (only strings hold non-ASCII, and there ``\\uXXXX`` decodes
back to the very character), so one handler serves every front end, the REPL included.
"""

from __future__ import annotations

import codecs
import sys

#: The codec error handler's registered name.
ESCAPE = "cat-code-json-escape"


def _escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    escaped = []
    for char in error.object[error.start : error.end]:
        code = ord(char)
        if code > 0xFFFF:  # a surrogate pair, as JSON spells characters beyond the BMP
            code -= 0x10000
            escaped.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{code:04x}")
    return "".join(escaped), error.end


codecs.register_error(ESCAPE, _escape)


def tolerate_unencodable_output() -> None:
    """Reconfigure stdout and stderr, when they do not encode UTF, to escape what their
    encoding cannot hold (streams without ``reconfigure``, e.g. a test's capture, are left)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None or encoding.startswith("utf"):
            continue
        reconfigure(errors=ESCAPE)
