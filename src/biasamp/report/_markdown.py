"""The Markdown report (``report.md``): a layout of the report's sections."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..results import ProbeResult
from ._format import markdown_table
from ._sections import NOTE_KEYS, Section, build_sections

__all__ = ["markdown_report", "render_markdown"]


def _generic(s: Section) -> list[str]:
    parts = [f"## {s.title}", ""]
    if s.bullets and s.table is not None:  # notes above a table, as their own paragraphs
        parts += [p for b in s.bullets for p in (f"> {b}", "")]
    if s.intro and s.table is not None:
        parts += [s.intro, ""]
    if s.table is not None:
        parts += [markdown_table(s.table), ""]
    elif s.empty:
        parts += [s.empty, ""]
    if s.bullets and s.table is None:
        parts += [f"- {b}" for b in s.bullets] + [""]
    if s.text:
        parts += [s.text, ""]
    if s.footer:
        parts += [s.footer, ""]
    return parts


def markdown_report(sections: Sequence[Section], links: Mapping[str, str]) -> str:
    """Lay out ``sections`` as Markdown; ``links`` maps plot kind -> relative file name."""
    parts: list[str] = []
    for s in sections:
        if s.key == "title":
            parts += [f"# {s.title}", ""]
        elif s.key == "note":
            parts += [f"> {s.text}", ""]
        elif s.key in NOTE_KEYS:
            parts += [f"**{s.title}**", ""] + [f"- {b}" for b in s.bullets] + [""]
        elif s.key == "plots":
            shown = [(kind, title) for kind, title in s.plots if kind in links]
            if shown:
                parts += [f"## {s.title}", ""]
                for kind, title in shown:
                    parts += [f"![{title}]({links[kind]})", ""]
        elif s.table is not None or s.empty or s.bullets or s.text:
            parts += _generic(s)
    return "\n".join(parts)


def render_markdown(result: ProbeResult, *, plots: Mapping[str, str | os.PathLike] | None = None
                    ) -> str:
    """The Markdown report of a result.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        In memory or read with :meth:`~biasamp.results.ProbeResult.load`.
    plots : dict, optional
        Plot kind -> file name of the PNG, linked as given (relative to the report).

    Returns
    -------
    str
    """
    links = {k: os.fspath(v) for k, v in (plots or {}).items()}
    return markdown_report(build_sections(result), links)
