"""The self-contained HTML report (``report.html``): a layout of the report's sections.

Inline CSS and the PNG plots embedded as base64 data URIs; no scripts. The sections' texts
are Markdown, rendered by :func:`~._format.markdown_html` (lists as lists, code spans as
``<code>``; raw HTML escaped). Each section shows what the Markdown report shows: its notes,
intro, table, text and footer.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..results import ProbeResult
from ._format import CSS, html_table, inline_html, markdown_html, markdown_list, plain_text
from ._sections import NOTE_KEYS, Section, build_sections

__all__ = ["html_report", "render_html"]


def _note(inner: str) -> str:
    return f"<div class='note'>{inner}</div>"


def _generic(s: Section) -> list[str]:
    out = [f"<h2>{inline_html(s.title)}</h2>"]
    if s.bullets and s.table is not None:  # notes above a table, each its own paragraph
        out += [_note(markdown_html(b)) for b in s.bullets]
    if s.intro and s.table is not None:
        out.append(markdown_html(s.intro))
    if s.table is not None:
        out.append(html_table(s.table))
    elif s.empty:
        out.append(markdown_html(s.empty))
    if s.bullets and s.table is None:
        out.append(markdown_list(s.bullets))
    for text in (s.text, s.footer):
        if text:
            out.append(markdown_html(text))
    return out


def _image(title: str, path) -> list[str]:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return [f"<h2>{html.escape(title)}</h2>",
            f"<img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>"]


def html_report(sections: Sequence[Section], images: Mapping[str, str | os.PathLike]) -> str:
    """Lay out ``sections`` as one HTML page; ``images`` maps plot kind -> PNG path (embedded)."""
    out: list[str] = []
    for s in sections:
        if s.key == "title":
            out += ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
                    f"<title>{html.escape(plain_text(s.title))}</title><style>{CSS}</style>"
                    "</head><body>", f"<h1>{inline_html(s.title)}</h1>"]
        elif s.key == "note":
            out.append(_note(markdown_html(s.text)))
        elif s.key in NOTE_KEYS:
            out.append(_note(f"<p><strong>{inline_html(s.title)}</strong></p>"
                             + markdown_list(s.bullets)))
        elif s.key == "plots":
            for kind, title in s.plots:
                if kind in images:
                    out += _image(title, images[kind])
        elif s.table is not None or s.empty or s.bullets or s.text:
            out += _generic(s)
    out.append("</body></html>")
    return "\n".join(out)


def render_html(result: ProbeResult, *, plots: Mapping[str, str | os.PathLike] | None = None
                ) -> str:
    """A self-contained HTML report: inline CSS, PNGs embedded as base64 data URIs.

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        In memory or read with :meth:`~biasamp.results.ProbeResult.load`.
    plots : dict, optional
        Plot kind -> path of a PNG file (read and embedded).

    Returns
    -------
    str
    """
    return html_report(build_sections(result), plots or {})
