"""Formatting helpers shared by every report format: numbers and CIs, tables, Markdown.

>>> import pandas as pd
>>> print(markdown_table(pd.DataFrame({"source": ["a|b"], "value": [format_value(0.5, 0.01)]})))
| source | value |
|---|---|
| a\\|b | 0.5000 ± 0.0100 |
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
from markdown_it import MarkdownIt

from .._conventions import DIRECTION_LABELS

__all__ = [
    "degenerate_ci",
    "direction_label",
    "format_ci",
    "format_value",
    "html_table",
    "inline_html",
    "markdown_html",
    "markdown_list",
    "markdown_table",
    "plain_text",
]


def direction_label(direction) -> str:
    """A direction's label in reports (``A→T``, ``T→A``); anything else unchanged."""
    return DIRECTION_LABELS.get(direction, str(direction))


def degenerate_ci(low, high) -> bool:
    """Whether ``[low, high]`` is an interval of zero width: nothing varied in its bootstrap.

    Equal up to rounding (``rel_tol=1e-9, abs_tol=1e-12``: a sum taken in another order); an
    interval merely narrower than the digits shown is real, and missing ends are unavailable.

    >>> degenerate_ci(0.1547, 0.1547), degenerate_ci(0.00100, 0.00101)
    (True, False)
    """
    if low is None or high is None or not (np.isfinite(float(low)) and np.isfinite(float(high))):
        return False
    return math.isclose(float(low), float(high), rel_tol=1e-9, abs_tol=1e-12)


def _number(value, digits: int, sign: bool) -> str:
    if value is None or not np.isfinite(float(value)):
        return "n/a"
    text = f"{float(value):{'+' if sign else ''}.{digits}f}"
    return text.lstrip("+-") if float(text) == 0 else text  # no -0.0000, no +0


def format_value(mean, std=None, ci=None, digits: int = 4, *, sign: bool = False) -> str:
    """``mean ± std [low, high]`` with fixed digits: the one number formatter of the reports.

    Every number is rounded to ``digits`` digits after the decimal point; a number that rounds
    to zero is written without a sign (``0.0000``, never ``-0.0000``); a missing or non-finite
    number is ``n/a``. A CI is always written ``[low, high]``; an interval that is unavailable
    (an end missing or non-finite) or degenerate (zero width, see :func:`degenerate_ci`: it
    would only repeat the value) is written ``[n/a]``.

    Parameters
    ----------
    mean : float or None
        The value.
    std : float, optional
        Shown after ``±``.
    ci : (float, float), optional
        Shown as ``[low, high]`` (or ``[n/a]``).
    digits : int
        Digits after the decimal point.
    sign : bool
        Write a ``+`` before a positive value (not before its std or CI).

    Examples
    --------
    >>> format_value(-0.12544, 0.0026, (-0.13, -0.12))
    '-0.1254 ± 0.0026 [-0.1300, -0.1200]'
    >>> format_value(None), format_value(-0.00001), format_value(1.0, digits=0, sign=True)
    ('n/a', '0.0000', '+1')
    >>> format_value(0.1547, ci=(0.1547, 0.1547)), format_value(0.1, ci=(float("nan"), 0.2))
    ('0.1547 [n/a]', '0.1000 [n/a]')
    """
    text = _number(mean, digits, sign)
    if std is not None:
        text += f" ± {_number(std, digits, False)}"
    if ci is not None:
        interval = format_ci(*ci, digits=digits)
        text += f" {'[n/a]' if interval == 'n/a' else interval}"
    return text


def format_ci(low, high, digits: int = 4) -> str:
    """A CI alone: ``[low, high]``, or ``n/a`` when unavailable or degenerate (see
    :func:`format_value`).

    >>> format_ci(-0.2557, -0.22341), format_ci(0.97, 0.97), format_ci(None, 0.2)
    ('[-0.2557, -0.2234]', 'n/a', 'n/a')
    """
    if degenerate_ci(low, high):
        return "n/a"
    ends = (_number(low, digits, False), _number(high, digits, False))
    return "n/a" if "n/a" in ends else f"[{ends[0]}, {ends[1]}]"


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
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


#: The one Markdown renderer of the reports: CommonMark, raw HTML escaped, not passed through.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def markdown_html(text: str) -> str:
    r"""A Markdown text (paragraphs, lists, ``**bold**``, ``*em*``, ```code```, links) as HTML;
    raw HTML in it is escaped, never passed through.

    >>> print(markdown_html("- **T→A** is *not* `A→T` <sic>\n- [x](https://x.org)"), end="")
    <ul>
    <li><strong>T→A</strong> is <em>not</em> <code>A→T</code> &lt;sic&gt;</li>
    <li><a href="https://x.org">x</a></li>
    </ul>
    """
    return _MARKDOWN.render(text)


def inline_html(text: str) -> str:
    """One line of inline Markdown as HTML (no enclosing paragraph; see :func:`markdown_html`).

    >>> inline_html("**T→A** is *not* `A→T` <sic>")
    '<strong>T→A</strong> is <em>not</em> <code>A→T</code> &lt;sic&gt;'
    """
    return _MARKDOWN.renderInline(text)


def markdown_list(items) -> str:
    """Markdown bullet lines as an HTML ``<ul>`` (each item inline Markdown)."""
    return markdown_html("".join(f"- {item}\n" for item in items))


def plain_text(text: str) -> str:
    """The text of an inline-Markdown line without its marks (for HTML titles).

    >>> plain_text("BiasAmp→ report: `bert-base-uncased` **now**")
    'BiasAmp→ report: bert-base-uncased now'
    """
    return "".join(
        t.content
        for line in _MARKDOWN.parseInline(text)
        for t in line.children or ()
        if t.type in ("text", "code_inline")
    )
