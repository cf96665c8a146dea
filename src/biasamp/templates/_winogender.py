"""Winogender schemas (Rudinger et al. 2018) -> a bound template set.

``templates.tsv`` of rudinger/winogender-schemas holds 120 templates (two per occupation):
``occupation(0)``, ``other-participant(1)``, ``answer`` (0: the pronoun refers to the
occupation, 1: to the participant) and ``sentence`` with ``$OCCUPATION``,
``$PARTICIPANT``, ``$NOM_PRONOUN``, ``$ACC_PRONOUN`` and ``$POSS_PRONOUN``. Each row
becomes one template bound to its occupation: ``$OCCUPATION`` -> ``{task}``, the
participant stays literal, the pronouns become the case slots, and a verb agreeing with a
nominative pronoun becomes an agreement slot ("$NOM_PRONOUN was" -> "{attribute} {was}",
as the published neutral sentences say "they were").
"""

from __future__ import annotations

import os
from pathlib import Path

from .._errors import BiasampError
from ._convert import Conversion, agreeing_verb, read_source, set_toml, slot_text, verb_key
from ._morphology import PRONOUN_CASES

__all__ = ["convert_winogender"]

_PRONOUNS = {"$NOM_PRONOUN": "attribute", "$ACC_PRONOUN": "attribute_accusative",
             "$POSS_PRONOUN": "attribute_possessive"}
_GROUPS = {
    "referent-occupation": "the pronoun refers to the occupation (answer 0)",
    "referent-participant": "the pronoun refers to the other participant (answer 1)",
}
_META = {
    "name": "winogender",
    "description": "The 120 Winogender schema templates (Rudinger et al. 2018), each bound to "
                   "its own occupation, with its own participant: two per occupation, one "
                   "where the pronoun refers to the occupation and one where it refers to "
                   "the participant.",
    "source": "Rudinger, Naradowsky, Leonard & Van Durme (2018), Gender Bias in Coreference "
              "Resolution, NAACL; rudinger/winogender-schemas data/templates.tsv",
    "year": 2018,
    "license": "MIT (rudinger/winogender-schemas; templates/LICENSE.winogender-schemas.txt)",
    "agreement": True,
    "article": "sound",
    "url": "https://github.com/rudinger/winogender-schemas",
}


def _template_text(sentence: str, participant: str, counts: dict) -> tuple[str, bool]:
    """The template text of one sentence and whether {a} precedes {task}."""
    words = sentence.split(" ")
    article = False
    for i, w in enumerate(words):
        for ph, slot in _PRONOUNS.items():
            if w.startswith(ph):
                capital = i == 0 or words[i - 1].endswith((".", "!", "?"))
                case = PRONOUN_CASES[slot]
                counts[case] = counts.get(case, 0) + 1
                words[i] = slot_text(slot, capital) + w[len(ph):]
                if slot == "attribute":
                    verb = agreeing_verb(words, i + 1)
                    if verb is not None:
                        words[verb[0]] = verb[1]
                        key = verb_key(verb[1])
                        counts["verbs"][key] = counts["verbs"].get(key, 0) + 1
        if w.startswith("$OCCUPATION"):
            words[i] = "{task}" + w[len("$OCCUPATION"):]
            if i > 0 and words[i - 1].lower() in ("a", "an"):
                words[i - 1] = "{A}" if words[i - 1][0] == "A" else "{a}"
                article = True
        elif w.startswith("$PARTICIPANT"):
            words[i] = participant + w[len("$PARTICIPANT"):]
    return " ".join(words), article


def convert_winogender(path: str | os.PathLike, *, name: str = "winogender") -> Conversion:
    """Convert Winogender's ``templates.tsv`` into a bound template set.

    Parameters
    ----------
    path : path-like
        ``templates.tsv`` or the folder holding it (rudinger/winogender-schemas ``data/``).
    name : str
        The set's name.

    Returns
    -------
    Conversion
        The TOML text, the counts (templates, per occupation, per pronoun case, agreeing
        verbs, per group) and the losses (rows that could not be converted, each named).

    Raises
    ------
    BiasampError
        A missing or non-UTF-8 file, or a header that is not Winogender's.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "templates.tsv"
    files: dict = {}
    lines = read_source(p, files, "winogender")
    header = lines[0].split("\t") if lines else []
    if len(header) != 4 or not header[0].startswith("occupation") or header[3] != "sentence":
        raise BiasampError(f"winogender: {str(p)!r} does not start with the header "
                           f"'occupation(0), other-participant(1), answer, sentence'; got "
                           f"{header!r}")
    counts: dict = {"verbs": {}}
    entries, losses, tasks, per_task = [], [], [], {}
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            losses.append(f"line {n}: {len(fields)} fields, expected 4")
            continue
        occ, participant, answer, sentence = (f.strip() for f in fields)
        unknown = sorted({w.rstrip(".,;:!?") for w in sentence.split()
                          if w.startswith("$")} - set(_PRONOUNS) - {"$OCCUPATION",
                                                                    "$PARTICIPANT"})
        if (answer not in ("0", "1") or sentence.count("$OCCUPATION") != 1 or unknown
                or not any(ph in sentence for ph in _PRONOUNS)):
            losses.append(f"line {n}: not a Winogender template (answer {answer!r}, "
                          f"placeholders {unknown or 'missing'}): {sentence!r}")
            continue
        text, article = _template_text(sentence, participant, counts)
        entry = {"id": f"{occ}.{participant}.{answer}", "text": text, "task": occ,
                 "groups": [f"referent-{'occupation' if answer == '0' else 'participant'}"],
                 "source": f"{p.name} line {n}"}
        if article:
            entry["mask"] = {"attribute_to_task": ["a", "task"]}
        entries.append(entry)
        if occ not in per_task:
            tasks.append(occ)
        per_task[occ] = per_task.get(occ, 0) + 1
    ids = [e["id"] for e in entries]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise BiasampError(f"winogender: {str(p)!r} holds the templates {dup} twice")
    verbs = counts.pop("verbs")
    sizes = sorted(set(per_task.values()))
    summary = {
        "templates": len(entries), "occupations": len(tasks),
        "occupations_by_number_of_templates": {
            str(k): sum(1 for v in per_task.values() if v == k) for k in sizes},
        "pronoun_cases": {c.replace(" ", "_"): counts[c] for c in PRONOUN_CASES.values()
                          if c in counts},
        "agreeing_verbs": verbs,
        "groups": {g: sum(1 for e in entries if g in e["groups"]) for g in _GROUPS},
    }
    text = _toml(name, tasks=tasks, entries=entries, files=files, summary=summary, losses=losses)
    return Conversion(name, text, summary, losses, files)


def _toml(name, *, tasks, entries, files, summary, losses) -> str:
    return set_toml("winogender", {**_META, "name": name}, _GROUPS, tasks=tasks,
                    entries=entries, files=files, summary=summary, losses=losses,
                    source=f"# from {', '.join(f'{k} (sha256 {v})' for k, v in files.items())}.")
