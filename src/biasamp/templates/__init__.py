"""Template sets and attribute forms: which sentences are probed. A template set is one TOML
file (format, slots, masked spans and the shipped sets with their sources:
``templates/README.md``); ``tasks`` is anything :func:`biasamp.tasks.load_tasks` accepts.
"""

from __future__ import annotations

from .._conventions import ATTRIBUTES, BLANK
from ._convert import conversion_output, convert_winobias, convert_winogender
from ._groups import (
    GROUP_SLOTS,
    AttributeSet,
    Realisation,
    attribute_sets_of,
    is_attribute_set,
    list_attribute_sets,
    load_attribute_set,
    pool_realisations,
    word_groups,
)
from ._loading import list_template_sets, load_template_set
from ._model import Template, TemplateSet
from ._prompts import (
    build_prompts,
    realisations,
    render_sentences,
    resolve_attributes,
    template_tasks,
)

#: The benchmark converters (``biasamp templates convert NAME PATH``): name -> function.
CONVERTERS = {"winogender": convert_winogender, "winobias": convert_winobias}

__all__ = [
    "ATTRIBUTES",
    "AttributeSet",
    "attribute_sets_of",
    "BLANK",
    "CONVERTERS",
    "GROUP_SLOTS",
    "Realisation",
    "Template",
    "TemplateSet",
    "build_prompts",
    "conversion_output",
    "convert_winobias",
    "convert_winogender",
    "is_attribute_set",
    "list_attribute_sets",
    "load_attribute_set",
    "pool_realisations",
    "realisations",
    "list_template_sets",
    "load_template_set",
    "render_sentences",
    "resolve_attributes",
    "template_tasks",
    "word_groups",
]
