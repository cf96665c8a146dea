"""MkDocs hook (mkdocs.yml ``hooks:``): the generated parts of the site.

A page holds a marker line ``<!-- generated: NAME -->`` where the generated Markdown goes;
``on_page_markdown`` replaces it. Nothing is copied by hand, so a change of an option or of the
results file's layout changes one place (``ProbeConfig``'s fields, ``biasamp._schema``):

- ``probe-options``: ``biasamp.pipeline.config.options_markdown()``, the options of
  ``biasamp probe`` / ``ProbeConfig`` with their groups, flags, defaults, checks and help;
- ``results-schema``: the JSON Schema shipped as ``biasamp/results.schema.json``, one table per
  object.

``on_page_content`` shows the docstrings' Sphinx roles (``:func:`x```) as plain code.

The functions do not import mkdocs, so tests/test_docs.py checks them without the docs extra.
"""

from __future__ import annotations

import json
import re
from importlib import resources

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


def _type(spec: dict) -> str:
    """One JSON Schema type as short Markdown: `string`, `number in [-2, 2]`, `null`, a link to
    the object's table, an enum's values."""
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in spec:
        return " or ".join(_type(s) for s in spec["anyOf"])
    if "enum" in spec:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in spec["enum"])
    if "const" in spec:
        return f"`{json.dumps(spec['const'])}`"
    kind = spec.get("type", "any")
    if kind == "array":
        return f"array of {_type(spec.get('items', {}))}"
    if kind == "object" and "additionalProperties" in spec:
        values = spec["additionalProperties"]
        return "object" if values is True else f"object of {_type(values)}"
    bounds = [
        f"{op} {spec[key]:g}"
        for key, op in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"))
        if key in spec
    ]
    return f"`{kind}`" + (f" ({', '.join(bounds)})" if bounds else "")


def _text(doc: str) -> str:
    """A docstring-style description as one Markdown line (``x`` and :role:`x` become `x`)."""
    doc = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", " ".join(doc.split()))
    return re.sub(r"``(.+?)``", r"`\1`", doc)


def _object_table(title: str, spec: dict, *, level: str = "##") -> list[str]:
    required = set(spec.get("required", ()))
    props = spec.get("properties", {})
    described = any(p.get("description") for p in props.values())
    out = [f"{level} {title}", ""]
    if spec.get("description"):
        out += [_text(spec["description"]), ""]
    head = ["key", "type", "required", *(["description"] if described else [])]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, prop in props.items():
        cells = [f"`{key}`", _type(prop), "yes" if key in required else "no"]
        cells += [_text(prop.get("description", ""))] if described else []
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return [*out, ""]


def schema_markdown(schema: dict) -> str:
    """The results-format reference: the top-level object, then each object it refers to."""
    lines = _object_table(f"`results.json` ({schema['title']})", schema)
    for name in sorted(schema.get("$defs", {})):
        lines += _object_table(name, schema["$defs"][name], level="###")
    return "\n".join(lines)


def generated(name: str) -> str:
    if name == "probe-options":
        from biasamp.pipeline.config import options_markdown

        return options_markdown()
    if name == "results-schema":
        text = resources.files("biasamp").joinpath("results.schema.json").read_text("utf-8")
        return schema_markdown(json.loads(text))
    raise ValueError(f"unknown generated part {name!r} (known: probe-options, results-schema)")


def _code_pipes(markdown: str) -> str:
    """In table rows, ``\\|`` inside a code span becomes ``|``: GitHub's tables need the escape,
    Python-Markdown's keep a code span whole and would show the backslash."""

    def row(line: str) -> str:
        if not line.startswith("|"):
            return line
        return re.sub(r"`[^`]*`", lambda m: m.group(0).replace("\\|", "|"), line)

    return "\n".join(row(line) for line in markdown.split("\n"))


def fill(markdown: str) -> str:
    return _code_pipes(MARKER.sub(lambda m: generated(m.group(1)), markdown))


def on_page_markdown(markdown, **_):
    return fill(markdown)


ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):<code>~?")


def on_page_content(html, **_):
    """The docstrings' Sphinx roles (:func:`probe`) as plain code in the API page's HTML."""
    return ROLE.sub("<code>", html)
