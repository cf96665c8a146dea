"""Wikipedia XML dumps (``pages-articles*.xml[.bz2]``): streamed pages -> plain article text.

The XML is parsed incrementally (``xml.etree.ElementTree.iterparse``; each page is cleared
once read, so memory holds one page). Articles are the pages of namespace 0 that are not
redirects. Their wikitext is parsed with ``mwparserfromhell``: references, tables and links
to files, categories or other languages are removed, headings become WikiText-style lines
(``== Early life ==``, which both counting rules skip, as in WikiText-103), and the rest is
``strip_code()``: templates dropped, links replaced by their text, bold/italics removed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from .._errors import BiasampError, MissingDependencyError

__all__ = ["iter_wiki_articles", "strip_wikitext"]

# [[File:...]], [[Category:...]], [[de:...]]: a prefix, then a colon (not [[:Category:X]])
_PREFIXED_LINK = re.compile(r"^\s*[A-Za-z][A-Za-z0-9 _-]*:")
_REMOVED_TAGS = ("ref", "table", "gallery", "references")


def _mwparser():
    try:
        import mwparserfromhell
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise MissingDependencyError("Wikipedia XML dumps need `pip install mwparserfromhell` "
                                     "(or biasamp[formats])") from exc
    return mwparserfromhell


def _remove(code, node) -> None:
    try:
        code.remove(node)
    except ValueError:  # inside a node removed before
        pass


def strip_wikitext(text: str) -> str:
    """Plain text of an article's wikitext.

    >>> print(strip_wikitext("'''Ada''' was a [[nurse|nurse]].<ref>x</ref>\\n== Life ==\\n"
    ...                      "{{Infobox|a=b}}She wrote [[poetry]].[[Category:Nurses]]"))
    Ada was a nurse.
    == Life ==
    She wrote poetry.
    """
    mw = _mwparser()
    code = mw.parse(text)
    for tag in code.filter_tags(matches=lambda n: str(n.tag).strip().lower() in _REMOVED_TAGS):
        _remove(code, tag)
    for link in code.filter_wikilinks():
        if _PREFIXED_LINK.match(str(link.title)):
            _remove(code, link)
    for heading in code.filter_headings():
        title = heading.title.strip_code().strip()
        marks = "=" * heading.level
        try:
            code.replace(heading, mw.nodes.Text(f"{marks} {title} {marks}"))
        except ValueError:
            pass
    return code.strip_code(normalize=True, collapse=True).strip()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def iter_wiki_articles(f, where: str) -> Iterator[str]:
    """Plain texts of the articles of a dump (a binary stream of its XML)."""
    depth = 0
    root = None
    try:
        for event, elem in ET.iterparse(f, events=("start", "end")):
            if event == "start":
                if root is None:
                    root = elem
                    if _local(elem.tag) != "mediawiki":
                        raise BiasampError(f"corpus file {where} is not a Wikipedia XML dump "
                                           f"(root element <{_local(elem.tag)}>, not "
                                           "<mediawiki>)")
                depth += 1
                continue
            depth -= 1
            if _local(elem.tag) != "page":
                continue
            ns = elem.findtext("{*}ns", default="0").strip()
            text = elem.findtext("{*}revision/{*}text", default="")
            if ns == "0" and elem.find("{*}redirect") is None and text.strip():
                article = strip_wikitext(text)
                if article:
                    yield article
            root.clear()   # drop the pages read so far: bounded memory
    except ET.ParseError as exc:
        raise BiasampError(f"corpus file {where} is not well-formed XML: {exc}") from None
