"""Formatting helpers shared by every report format: numbers, tables, inline marks, CSS.

>>> import pandas as pd
>>> print(markdown_table(pd.DataFrame({"source": ["a|b"], "value": [format_value(0.5, 0.01)]})))
| source | value |
|---|---|
| a\\|b | 0.5000 ± 0.0100 |
"""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd

from .._conventions import DIRECTION_LABELS

__all__ = ["CSS", "direction_label", "format_value", "html_table", "inline_html",
           "markdown_table", "plain_text"]

def direction_label(direction) -> str:
    """A direction's label in reports (``A→T``, ``T→A``); anything else unchanged."""
    return DIRECTION_LABELS.get(direction, str(direction))


#: The style sheet every HTML page embeds (reports and comparisons are self-contained).
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;border-bottom:2px solid #ddd;padding-bottom:.3em}h2{font-size:1.25em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.3em .6em;
text-align:left}th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}code{background:#f4f4f4;padding:0 .2em}
.note{background:#fff7e0;border-left:4px solid #e0a800;padding:.5em 1em}
"""


def format_value(mean, std=None, ci=None, digits: int = 4) -> str:
    """``mean ± std`` (and ``[low, high]``) with fixed digits; NaN shows as ``n/a``.

    Parameters
    ----------
    mean : float
        The value.
    std : float, optional
        Shown after ``±``.
    ci : (float, float), optional
        Shown as ``[low, high]``.
    digits : int
        Digits after the decimal point.

    Examples
    --------
    >>> format_value(-0.12544, 0.0026, (-0.13, -0.12))
    '-0.1254 ± 0.0026 [-0.1300, -0.1200]'
    >>> format_value(None)
    'n/a'
    """
    def f(v):
        return "n/a" if v is None or not np.isfinite(float(v)) else f"{float(v):.{digits}f}"
    text = f(mean)
    if std is not None:
        text += f" ± {f(std)}"
    if ci is not None:
        text += f" [{f(ci[0])}, {f(ci[1])}]"
    return text


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a DataFrame (no index; ``|`` in cells escaped)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def html_table(df: pd.DataFrame) -> str:
    """An HTML ``<table>`` of a DataFrame (no index; every cell escaped)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def inline_html(text: str) -> str:
    """Escape, then the inline marks report texts use (``**bold**``, ``*em*``, ```code```).

    >>> inline_html("**T→A** is *not* `A→T` <sic>")
    '<strong>T→A</strong> is <em>not</em> <code>A→T</code> &lt;sic&gt;'
    """
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    t = re.sub(r"\*(.+?)\*", r"<em>\1</em>", t)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", t)


def plain_text(text: str) -> str:
    """Drop the ```code``` marks of an inline-Markdown title (for HTML titles).

    >>> plain_text("BiasAmp→ report: `bert-base-uncased`")
    'BiasAmp→ report: bert-base-uncased'
    """
    return re.sub(r"`(.+?)`", r"\1", text)
