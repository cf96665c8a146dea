"""What the benchmark converters share: the result (:class:`Conversion`), TOML writing, verb
agreement after a pronoun, and reading source files.

The converters (``_winogender``, ``_winobias``) turn a benchmark's published files into a
template set file (format: ``templates/README.md``) and count what they converted; the
shipped ``winogender`` and ``winobias`` sets are their output on the published files, so a
newer release of a benchmark is one command away (``biasamp templates convert``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import BiasampError
from .._files import sha256_bytes

__all__ = ["Conversion", "agreeing_verb", "read_source", "toml_value", "verb_key"]


@dataclass
class Conversion:
    """A converted benchmark: the template-set file and what went into it.

    Attributes
    ----------
    name : str
        The set's name.
    text : str
        The content of the template-set TOML file.
    counts : dict
        What was converted (sentences, templates, per occupation, per pronoun case, ...).
    losses : list of str
        Each sentence that could not be converted, with the reason (empty: every sentence
        was converted).
    files : dict
        Source file name -> sha256 of its bytes.
    """

    name: str
    text: str
    counts: dict
    losses: list = field(default_factory=list)
    files: dict = field(default_factory=dict)

    def write(self, path: str | os.PathLike) -> Path:
        """Write the TOML file (UTF-8, LF line ends); return its path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(self.text.encode("utf-8"))
        return p

    def summary_lines(self) -> list[str]:
        """The counts as ``key: value`` lines, then the losses (for the CLI)."""
        lines = [f"{k}: {_flat(v)}" for k, v in self.counts.items()]
        lines.append(f"lost: {len(self.losses)}")
        lines += [f"  {loss}" for loss in self.losses]
        return lines


def _flat(v) -> str:
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {_flat(x)}" for k, x in v.items())
    return str(v)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_value(v) -> str:
    """A TOML literal for a str, int, bool, list or mapping (an inline table)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        items = [f"{k if _BARE_KEY.match(str(k)) else json.dumps(str(k))} = {toml_value(x)}"
                 for k, x in v.items()]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"no TOML literal for {type(v).__name__}")  # pragma: no cover


def read_source(path: Path, files: dict, what: str) -> list[str]:
    """The lines of a UTF-8 source file (its hash recorded in ``files``)."""
    if not path.is_file():
        raise BiasampError(f"{what}: file not found: {str(path)!r}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BiasampError(f"{what}: {str(path)!r} is not UTF-8: {exc}") from None
    files[path.name] = sha256_bytes(data)
    return text.splitlines()


# ---------------------------------------------------------------------------------------
# verb agreement
# ---------------------------------------------------------------------------------------

#: Verbs with an irregular plural (the singular form -> the slot that renders it).
_IRREGULAR = {"is": "{be}", "was": "{was}", "has": "{verb:has|have}", "does": "{verb:does|do}",
              "isn't": "{verb:isn't|aren't}", "wasn't": "{verb:wasn't|weren't}",
              "hasn't": "{verb:hasn't|haven't}", "doesn't": "{verb:doesn't|don't}"}
#: Adverbs that may stand between a pronoun and its verb ("he always knows").
_ADVERBS = frozenset({"always", "never", "often", "only", "really", "constantly", "normally",
                      "usually", "quickly", "gladly", "just", "also", "still", "actually",
                      "rarely", "sometimes", "even", "finally", "already", "recently",
                      "clearly", "seldom", "truly", "barely", "hardly", "certainly", "simply",
                      "surely", "generally", "mostly", "immediately", "probably"})
#: Words ending in -s after a pronoun that are not third-person verbs.
_NOT_VERBS = frozenset({"always", "perhaps", "sometimes", "thus", "his", "hers", "its", "yes",
                        "less", "unless", "across", "towards", "afterwards", "besides",
                        "nevertheless", "regardless", "as", "us", "this", "was", "is", "has",
                        "does", "news"})
_PUNCT = ".,;:!?\"')"


def _plural(verb: str) -> str:
    if verb.endswith("ies") and len(verb) > 4 and verb not in ("lies", "dies", "ties", "vies"):
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1]


def agreeing_verb(words: list[str], start: int) -> tuple[int, str] | None:
    """The verb agreeing with a pronoun whose next word is ``words[start]``.

    Skips adverbs ("always", "never", ...); returns ``(index, slot text)`` for a
    third-person singular present verb or is/was/has/does (their negations too), with the
    word's trailing punctuation kept after the slot, or None (a past tense or modal verb
    agrees with every pronoun: "he could" / "they could").

    >>> agreeing_verb("he always wants more .".split(), 1)
    (2, '{verb:wants|want}')
    >>> agreeing_verb("she was tired.".split(), 1), agreeing_verb("he could go".split(), 1)
    ((1, '{was}'), None)
    """
    i = start
    while i < len(words) and words[i].lower() in _ADVERBS:
        i += 1
    if i >= len(words):
        return None
    word = words[i]
    core = word.rstrip(_PUNCT)
    tail = word[len(core):]
    low = core.lower()
    if core != low:  # a capitalised word is not a verb after a pronoun
        return None
    if low in _IRREGULAR:
        return i, _IRREGULAR[low] + tail
    if (low.endswith("s") and low.isalpha() and len(low) > 3 and low not in _NOT_VERBS
            and not low.endswith(("ss", "us", "is"))):
        return i, "{verb:" + low + "|" + _plural(low) + "}" + tail
    return None


def verb_key(slot_text: str) -> str:
    """``"singular|plural"`` of a verb slot text (``"{was}."`` -> ``"was|were"``).

    >>> verb_key("{was}."), verb_key("{verb:wants|want}")
    ('was|were', 'wants|want')
    """
    core = slot_text[:slot_text.rindex("}") + 1]
    return {"{be}": "is|are", "{was}": "was|were"}.get(core) or core[len("{verb:"):-1]
