"""Whether this engine's builder can parse the Dockerfile's heredocs (image/heredoc.py): asked
before a build, so a refusal comes first rather than minutes in as
`Unknown instruction: "APT-GET"`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uvdock.errors import EnvironmentUnusable
from uvdock.files import textlines
from uvdock.image import heredoc

if TYPE_CHECKING:
    from uvdock.context import Context
    from uvdock.image.heredoc import Verdict


def build_refusal(ctx: Context, engine: str, dockerfile: str) -> Verdict | None:
    """None when the engine can build it, or the file has no heredoc or cannot be read (the
    engine then says why)."""
    try:
        text = textlines.read_text(ctx.repo / dockerfile, errors="replace", newlines=True)
    except OSError:
        return None
    line = heredoc.first_heredoc(text)
    if line is None:
        return None
    from uvdock.run import builder_probe

    return heredoc.verdict(builder_probe.builder(engine, ctx.env), dockerfile, line)


def check_heredocs(ctx: Context, engine: str, dockerfile: str) -> None:
    """Refuse (exit 3) a build the engine cannot parse; warn where it works only here."""
    found = build_refusal(ctx, engine, dockerfile)
    if found is not None and found.refuse:
        raise EnvironmentUnusable(found.message, hint=f"what works: {heredoc.WHAT_WORKS}")
    if found is not None:
        ctx.out.warn(f"{found.message}; what works everywhere: {heredoc.WHAT_WORKS}")
