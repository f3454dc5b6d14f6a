"""MkDocs hook: the CLI page's reference, rendered from the commands themselves
(``graphsvc.ops.cli.reference``), so it cannot drift from them. A page asks for it with the
marker line ``<!-- cli-reference -->``."""

from __future__ import annotations

from typing import Any

from graphsvc.ops.cli.reference import markdown

MARKER = "<!-- cli-reference -->"


def on_page_markdown(text: str, **_: Any) -> str:
    if MARKER not in text:
        return text
    return text.replace(MARKER, markdown())
