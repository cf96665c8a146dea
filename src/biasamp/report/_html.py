"""The self-contained HTML report (``report.html``): a layout of the report's sections.

Inline CSS and the PNG plots embedded as base64 data URIs; no links, no scripts. As in
biasamp 0.1, it leaves out the sections' ``intro`` and ``footer`` sentences.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..results import ProbeResult
from ._format import CSS, html_table, inline_html, plain_text
from ._sections import NOTE_KEYS, Section, build_sections

__all__ = ["html_report", "render_html"]


def _generic(s: Section) -> list[str]:
    if s.bullets and s.table is None:
        return ([f"<h2>{html.escape(s.title)}</h2><ul>"]
                + [f"<li>{inline_html(b)}</li>" for b in s.bullets] + ["</ul>"])
    out = [f"<h2>{html.escape(s.title)}</h2>"]
    out += [f"<p class='note'>{inline_html(b)}</p>" for b in s.bullets]  # notes above a table
    if s.table is not None:
        out.append(html_table(s.table))
    elif s.empty:
        out.append(f"<p>{inline_html(s.empty)}</p>")
    if s.text:
        out.append(f"<p>{inline_html(s.text)}</p>")
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
            title = html.escape(plain_text(s.title))
            out += ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
                    f"<title>{title}</title><style>{CSS}</style></head><body>",
                    f"<h1>{title}</h1>"]
        elif s.key == "note":
            out.append(f"<p class='note'>{html.escape(s.text)}</p>")
        elif s.key in NOTE_KEYS:
            out.append(f"<p class='note'><strong>{html.escape(s.title)}</strong> "
                       + " ".join(html.escape(b) for b in s.bullets) + "</p>")
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
