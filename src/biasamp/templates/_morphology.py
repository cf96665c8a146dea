"""English morphology of the templates: a/an, the forms of an attribute, verb agreement.

Each table here is the one place where a form is defined; the slots of the template model
(:data:`biasamp.templates.SLOTS`) are built from :data:`ATTRIBUTE_FORMS` and
:data:`VERB_FORMS`, so a new attribute slot (a pronoun case) or a new named agreeing verb is
one entry in one table. Any other verb agrees through the generic slot
``{verb:SINGULAR|PLURAL}`` (``{verb:has|have}``), rendered by :func:`verb_form` too.
"""

from __future__ import annotations

from types import MappingProxyType

from .._errors import BiasampError
from .._validation import OneOf, check

__all__ = ["AN_INITIALISMS", "AN_WORDS", "ARTICLE_RULES", "ATTRIBUTE_FORMS", "A_WORDS",
           "PRONOUN_CASES", "VERB_FORMS", "article_for", "indefinite_article", "verb_form"]

#: Surface form of each attribute for each attribute slot: the five pronoun cases and the
#: noun. "they" is the singular they (reflexive "themselves", the form Winogender and most
#: style guides use).
ATTRIBUTE_FORMS = MappingProxyType({
    "attribute": MappingProxyType({"he": "he", "she": "she", "they": "they"}),
    "attribute_accusative": MappingProxyType({"he": "him", "she": "her", "they": "them"}),
    "attribute_possessive": MappingProxyType({"he": "his", "she": "her", "they": "their"}),
    "attribute_possessive_pronoun": MappingProxyType({"he": "his", "she": "hers",
                                                      "they": "theirs"}),
    "attribute_reflexive": MappingProxyType({"he": "himself", "she": "herself",
                                             "they": "themselves"}),
    "attribute_noun": MappingProxyType({"he": "man", "she": "woman", "they": "person"}),
})

#: The pronoun case of each pronoun slot (nominative: "he did it", accusative: "I saw him",
#: possessive determiner: "his car", possessive pronoun: "the car is his", reflexive).
PRONOUN_CASES = MappingProxyType({
    "attribute": "nominative", "attribute_accusative": "accusative",
    "attribute_possessive": "possessive determiner",
    "attribute_possessive_pronoun": "possessive pronoun", "attribute_reflexive": "reflexive",
})

#: Named verb slots agreeing with the pronoun: slot -> (form without agreement and for
#: he/she, plural form used for "they" when the set has agreement). Every other verb is
#: written ``{verb:SINGULAR|PLURAL}`` in the template.
VERB_FORMS = MappingProxyType({"be": ("is", "are"), "was": ("was", "were")})

#: The a/an rules a template set may declare (see :func:`indefinite_article`).
ARTICLE_RULES = ("sound", "wang2021")

#: Words spelled with a consonant letter but spoken with a vowel sound -> "an" (matched
#: on the lower-cased word, as whole words or as prefixes).
AN_WORDS = frozenset({"heir", "heiress", "heirloom", "herb", "honest", "honestly", "honesty",
                      "honor", "honorable", "honorary", "honored", "honour", "honourable",
                      "honoured", "hour", "hourly", "hours"})
_AN_PREFIXES = ("honest", "honor", "honour", "hour", "heir")
#: Initialisms read letter by letter whose first letter name starts with a vowel sound
#: (matched case-sensitively, e.g. "an MBA", "an RN").
AN_INITIALISMS = frozenset({"FBI", "HR", "LLM", "MBA", "MD", "MP", "MRI", "NGO", "NHS", "RN",
                            "SUV", "X-ray"})
#: Words spelled with a vowel letter but spoken with a consonant sound -> "a".
A_WORDS = frozenset({"eucalyptus", "eulogy", "euphoric", "euro", "european", "ewe", "once",
                     "one", "ubiquitous", "ukrainian", "unanimous", "unicorn", "uniform",
                     "union", "unique", "unit", "united", "universal", "university", "uranium",
                     "urinal", "usable", "usage", "use", "used", "useful", "useless", "user",
                     "usual", "usually", "utensil", "utility", "utilized", "utopian"})
_A_PREFIXES = ("eu", "one-", "uni", "usa", "use", "usu", "uti", "ubi", "ukr", "ura", "uri")
# "uni" words where "un-" is the negating prefix are spoken with a vowel: "an unimportant"
_A_PREFIX_EXCEPTIONS = ("unim", "unin", "unid")

_PUNCTUATION = ".,;:!?\"'()[]"


def verb_form(forms: tuple[str, str], attribute: str, agreement: bool) -> str:
    """The form of a verb, ``(singular, plural)``, next to ``attribute``.

    "they" takes the plural form when the set has agreement ("they have"), the singular one
    otherwise (the compat sets' "they is"); he and she always take the singular form.

    >>> verb_form(VERB_FORMS["be"], "they", True), verb_form(("wants", "want"), "she", True)
    ('are', 'wants')
    """
    singular, plural = forms
    return plural if (agreement and attribute == "they") else singular


def article_for(word: str, rule: str) -> str:
    """:func:`indefinite_article` without the checks (``rule`` is valid, ``word`` has a letter)."""
    token = word.strip().strip(_PUNCTUATION)
    if rule == "wang2021":
        return "an" if token[0] in "aeiou" else "a"
    if token in AN_INITIALISMS:
        return "an"
    low = token.lower()
    if low in AN_WORDS or low.startswith(_AN_PREFIXES):
        return "an"
    if low in A_WORDS or (low.startswith(_A_PREFIXES)
                          and not low.startswith(_A_PREFIX_EXCEPTIONS)):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


def indefinite_article(word: str, *, rule: str = "sound") -> str:
    """Return ``"a"`` or ``"an"`` for the word that follows the article.

    Parameters
    ----------
    word : str
        The following word (trailing punctuation is ignored).
    rule : {"sound", "wang2021"}, default "sound"
        ``"wang2021"`` is the paper's rule: "an" iff the word starts with a lower-case
        vowel letter (a, e, i, o, u), so "French" -> "a" and "Old" -> "a".
        ``"sound"`` starts from the vowel-letter rule (any case) and applies a small list
        of exceptions by sound: :data:`AN_WORDS` ("an hour", "an honest"), the
        initialisms in :data:`AN_INITIALISMS` ("an MBA") and :data:`A_WORDS` ("a
        university", "a European", "a one-way"), also as prefixes ("honestly",
        "universal"). Words starting with a digit get "a".

    Returns
    -------
    str
        ``"a"`` or ``"an"``.

    Examples
    --------
    >>> [indefinite_article(w) for w in ("old", "hour", "university", "MBA", "French")]
    ['an', 'an', 'a', 'an', 'a']
    >>> indefinite_article("Old", rule="wang2021"), indefinite_article("old", rule="wang2021")
    ('a', 'an')
    """
    rule = check(rule, OneOf(ARTICLE_RULES), "rule")
    if not str(word).strip().strip(_PUNCTUATION):
        raise BiasampError(f"word must contain a letter to choose a/an; got {word!r}")
    return article_for(str(word), rule)
