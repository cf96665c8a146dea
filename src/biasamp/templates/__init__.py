"""Template sets and attribute forms: which sentences are probed.

A *template set* is one TOML file in ``templates/`` (format: ``templates/README.md``): set
metadata and ``[[template]]`` entries. Template texts use named slots:

==================================  ===============================================
slot                                renders as (he / she / they)
==================================  ===============================================
``{attribute}``                     nominative: he / she / they
``{attribute_accusative}``          him / her / them
``{attribute_possessive}``          possessive determiner: his / her / their
``{attribute_possessive_pronoun}``  his / hers / theirs
``{attribute_reflexive}``           himself / herself / themselves
``{attribute_noun}``                man / woman / person
``{be}``, ``{was}``                 is / are, was / were, agreeing with the attribute when
                                    the set has ``agreement = true`` (compat: "they is")
``{verb:has|have}``                 any verb: singular | plural form ("they have")
``{group}``, ``{group_noun}``       a group's term / term and person noun ("Asian",
                                    "Asian person"): the slots of group templates, with
                                    groups (``templates/attributes/``) as attributes
``{task}``                          the task word (occupation)
``{a}``                             "a" or "an" for the FOLLOWING word
==================================  ===============================================

A capitalised slot (``{Attribute}``, ``{A}``) renders capitalised; a slot may occur several
times (a mask names one copy as ``attribute#2``). For a direction, the *blank*
(:data:`BLANK`) replaces the masked span: for task->attribute every slot that depends on the
attribute (the pronoun and, with agreement, its verb) unless the template says ``context =
"per-attribute"``; for attribute->task the task. The candidates are the surface strings of
that span, one per attribute (T->A) or per task (A->T). A template bound to its own task
(``task = "developer"``) is rendered with that task only; the shipped ``winogender`` and
``winobias`` sets are made of such templates by the converters (``biasamp templates convert``).
Every function here that takes ``tasks`` accepts what :func:`biasamp.tasks.load_tasks` accepts.

References
----------
.. [1] Wang, A. and Russakovsky, O. "Directional Bias Amplification." ICML 2021, Sec. 5.3.
.. [2] Lu, K. et al. "Gender Bias in Neural Natural Language Processing." 2019,
       arXiv:1807.11714 (supplement: the "ate because ... was hungry" sentences).
.. [3] Rudinger, R. et al. "Gender Bias in Coreference Resolution." NAACL 2018 (Winogender).
.. [4] Zhao, J. et al. "Gender Bias in Coreference Resolution: Evaluation and Debiasing
       Methods." NAACL 2018 (WinoBias).
"""

from __future__ import annotations

from .._conventions import ATTRIBUTES, BLANK
from ._convert import conversion_output, convert_winobias, convert_winogender
from ._groups import (
    GROUP_SLOTS,
    AttributeSet,
    Realisation,
    attribute_sets_of,
    group_realisations,
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
    "group_realisations",
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
