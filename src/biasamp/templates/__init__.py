"""Template sets and attribute forms: which sentences are probed.

A *template set* is one TOML file in ``templates/`` (format: ``templates/README.md``):
set metadata (name, description, source, year, license, agreement, article rule, the
slots masked per direction) and ``[[template]]`` entries (id, text, family, tense,
source). Template texts use named slots:

==========================  =======================================================
slot                        renders as
==========================  =======================================================
``{attribute}``             the pronoun: he / she / they
``{attribute_possessive}``  his / her / their
``{attribute_noun}``        man / woman / person
``{be}``, ``{was}``         is / are, was / were, agreeing with the attribute when the
                            set has ``agreement = true`` (compat sets render "they is")
``{task}``                  the task word (occupation)
``{a}``                     "a" or "an" for the FOLLOWING word
==========================  =======================================================

A slot written with a capital first letter (``{Attribute}``, ``{A}``) renders
capitalised. For a direction, the *blank* (:data:`BLANK`) replaces the masked span:
for task->attribute it covers every slot that depends on the attribute (the pronoun and,
with agreement, its verb, so "[BLANK] a nurse." cannot leak the answer through "are");
for attribute->task it covers the task. The candidates are the surface strings of that
span, one per attribute (T->A) or per task (A->T).

The task words come from :func:`biasamp.tasks.load_tasks` (a shipped vocabulary, a file,
``"a,b,c"`` or a list): every function here that takes ``tasks`` accepts what it accepts.

Modules: ``_morphology`` (a/an, attribute forms, verb agreement), ``_model`` (slots,
:class:`Template`, :class:`TemplateSet`, rendering), ``_checks`` (the rules of one
template), ``_loading`` (the TOML files), ``_prompts`` (sentences and prompts).

References
----------
.. [1] Wang, A. and Russakovsky, O. "Directional Bias Amplification." ICML 2021, Sec. 5.3.
.. [2] Lu, K. et al. "Gender Bias in Neural Natural Language Processing." 2019,
       arXiv:1807.11714 (supplement: the "ate because ... was hungry" sentences).
"""

from __future__ import annotations

from .._conventions import ATTRIBUTES, BLANK
from ._loading import TEMPLATE_SETS, list_template_sets, load_template_set
from ._model import SLOTS, Template, TemplateSet
from ._morphology import A_WORDS, AN_INITIALISMS, AN_WORDS, ATTRIBUTE_FORMS, indefinite_article
from ._prompts import build_prompts, render_sentences, resolve_attributes

__all__ = [
    "AN_INITIALISMS",
    "AN_WORDS",
    "ATTRIBUTES",
    "ATTRIBUTE_FORMS",
    "A_WORDS",
    "BLANK",
    "SLOTS",
    "TEMPLATE_SETS",
    "Template",
    "TemplateSet",
    "build_prompts",
    "indefinite_article",
    "list_template_sets",
    "load_template_set",
    "render_sentences",
    "resolve_attributes",
]

# Transitional, to be deleted: the task-vocabulary names moved to biasamp.tasks; this keeps
# the modules of the other rooms that still import them from here (probe.py,
# commands/count.py, commands/probe.py) working until they import from biasamp.tasks.
