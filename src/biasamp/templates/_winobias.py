"""WinoBias (Zhao et al. 2018) -> a bound template set.

The eight files ``{pro,anti}_stereotyped_type{1,2}.txt.{dev,test}`` of uclanlp/corefBias
hold 396 numbered sentences each, the referent occupation and its pronoun(s) in brackets:
``1 [The developer] argued with the designer because [he] did not like the design.`` Line
``n`` of a pro file and line ``n`` of its anti file are the same sentence with the
pronoun's gender swapped. Each sentence becomes a template bound to its referent
occupation (the other occupation stays literal); the bracketed pronouns become case slots
("her" is accusative or possessive as its twin's "him"/"his" says), a verb agreeing with a
nominative pronoun an agreement slot. A pro sentence and its anti twin give the same
template once the pronoun is a slot, so they are kept once, in both groups ``pro`` and
``anti``; twins whose texts differ (typo fixes in one file) stay two templates. A sentence
with two bracketed pronouns masks the first for task->attribute and renders the second for
each attribute (``context = "per-attribute"``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .._errors import BiasampError
from ._convert import Conversion, agreeing_verb, read_source, set_toml, slot_text, verb_key

__all__ = ["WINOBIAS_FILES", "convert_winobias"]

#: The eight sentence files, in conversion order.
WINOBIAS_FILES = tuple(f"{kind}_stereotyped_type{t}.txt.{split}" for t in (1, 2)
                       for split in ("dev", "test") for kind in ("pro", "anti"))
_PRONOUNS = {"he": "attribute", "she": "attribute", "him": "attribute_accusative",
             "his": "attribute_possessive", "hers": "attribute_possessive_pronoun",
             "himself": "attribute_reflexive", "herself": "attribute_reflexive"}
_CASES = {"attribute": "nominative", "attribute_accusative": "accusative",
          "attribute_possessive": "possessive_determiner",
          "attribute_possessive_pronoun": "possessive_pronoun",
          "attribute_reflexive": "reflexive"}
#: Words after "her" that make it an object ("asked her to ...", "hated her.").
_AFTER_OBJECT = frozenset({"to", "and", "for", "with", "in", "that", "a", "an", "the", "about",
                           "at", "on", "from", "if", "as", "because", "by", "into", "out",
                           "up", "off", "over", "so", "but", "or", "when", "after", "before",
                           "since", "until", "while", "whether", "how", "what", "why", "where",
                           "who", "this", "again", "back", "well", "some", "any", "his",
                           "her", "their", "not", "anything", "something", ""})
_GENDERED = re.compile(r"\b(he|she|him|her|his|hers|himself|herself)\b", re.I)
_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_GROUPS = {
    "type1": "type 1: the referent follows from world knowledge (semantics)",
    "type2": "type 2: the referent follows from the syntax",
    "pro": "pro-stereotyped sentences (the pronoun's gender is the occupation's stereotype)",
    "anti": "anti-stereotyped sentences (the other gender); with the pronoun masked a pro "
            "sentence and its anti twin are the same template",
    "dev": "the development split",
    "test": "the test split",
}
_META = {
    "name": "winobias",
    "description": "The 3,168 WinoBias sentences (Zhao et al. 2018; type 1 and 2, pro and "
                   "anti, dev and test), each bound to its referent occupation as written in "
                   "the sentences (mechanic, construction worker, tailor); pro/anti twins "
                   "that are one template once the pronoun is a slot are kept once.",
    "source": "Zhao, Wang, Yatskar, Ordonez & Chang (2018), Gender Bias in Coreference "
              "Resolution: Evaluation and Debiasing Methods, NAACL; uclanlp/corefBias "
              "WinoBias/wino/data",
    "year": 2018,
    "license": "MIT (uclanlp/corefBias; templates/LICENSE.corefBias.txt)",
    "agreement": True,
    "article": "sound",
    "url": "https://github.com/uclanlp/corefBias",
}


def _pronoun_slot(word: str, twin: str | None, after: str, counts: dict) -> str:
    low = word.strip().lower()
    if low != "her":
        slot = _PRONOUNS[low]
        if slot == "attribute_possessive" and after in ("", ".", ",", "!", "?", ";"):
            slot = "attribute_possessive_pronoun"  # "... was [his]."
    elif twin in ("him", "his"):
        slot = "attribute_accusative" if twin == "him" else "attribute_possessive"
        counts["her_by_twin"] += 1
    else:
        slot = ("attribute_accusative" if after.strip(".,;:!?").lower() in _AFTER_OBJECT
                else "attribute_possessive")
        counts["her_by_next_word"] += 1
    counts["cases"][_CASES[slot]] = counts["cases"].get(_CASES[slot], 0) + 1
    return slot_text(slot, word.strip()[:1].isupper())


def _parse(sentence: str, twin: str, occupations: dict, counts: dict):
    """(text, task, n_pronouns, article) of one sentence, or a reason it cannot be used."""
    found = list(_BRACKET.finditer(sentence))
    pron = [m for m in found if m.group(1).strip().lower() in _PRONOUNS or
            m.group(1).strip().lower() == "her"]
    refs = [m for m in found if m not in pron]
    if len(refs) != 1 or not pron:
        return f"{len(refs)} referent and {len(pron)} pronoun brackets"
    twin_pron = [m.group(1).strip().lower() for m in _BRACKET.finditer(twin)
                 if m.group(1).strip().lower() in _PRONOUNS or m.group(1).strip().lower() == "her"]
    det, occ = re.match(r"^\s*(?:(the|a|an)\s+)?(.*?)\s*$", refs[0].group(1), re.I).groups()
    task = occupations.get(occ.lower(), occ) if occupations else occ
    if occupations and occ.lower() not in occupations:
        return f"referent {occ!r} is not one of the occupations"
    counts["normalised_spaces"] += refs[0].group(1) != refs[0].group(1).strip()
    out, pos, k = [], 0, 0
    for m in found:
        out.append(sentence[pos:m.start()])
        if m is refs[0]:
            article = det is not None and det.lower() in ("a", "an")
            lead = ("{A} " if det[0] == "A" else "{a} ") if article else (f"{det} " if det else "")
            out.append(lead + "{task}")
        else:
            rest = sentence[m.end():].split()
            after = rest[0] if rest else ""
            same = twin_pron[k] if len(twin_pron) == len(pron) else None
            out.append(_pronoun_slot(m.group(1), same, after, counts))
            k += 1
        pos = m.end()
    out.append(sentence[pos:])
    words = "".join(out).split(" ")
    for i, w in enumerate(words):
        if w.lstrip("{").lower().startswith("attribute}"):
            verb = agreeing_verb(words, i + 1)
            if verb is not None:
                words[verb[0]] = verb[1]
                key = verb_key(verb[1])
                counts["verbs"][key] = counts["verbs"].get(key, 0) + 1
    literal = _GENDERED.findall(_BRACKET.sub("", sentence))
    counts["literal_gendered"] += bool(literal)
    return " ".join(words), task, len(pron), det is not None and det.lower() in ("a", "an")


def _occupations(folder: Path, files: dict) -> dict:
    """lower-cased occupation -> its spelling in the WinoBias lists (male, then female), or
    {} when the lists are not in the folder."""
    out = {}
    for name in ("male_occupations.txt", "female_occupations.txt"):
        if (folder / name).is_file():
            for w in read_source(folder / name, files, "winobias"):
                if w.strip():
                    out.setdefault(w.strip().lower(), w.strip())
    return out


def _read_pair(folder: Path, t: int, split: str, files: dict) -> list[tuple]:
    """(line number, pro sentence, anti sentence) of one type and split."""
    pro, anti = (read_source(folder / f"{k}_stereotyped_type{t}.txt.{split}", files,
                             "winobias") for k in ("pro", "anti"))
    pro, anti = ([x for x in lines if x.strip()] for lines in (pro, anti))
    if len(pro) != len(anti):
        raise BiasampError(f"winobias: type {t} {split}: the pro file has {len(pro)} sentences "
                           f"and the anti file {len(anti)}; they must pair line by line")
    out = []
    for a, b in zip(pro, anti):
        ma, mb = re.match(r"^(\d+) (.*)$", a), re.match(r"^(\d+) (.*)$", b)
        if not ma or not mb or ma.group(1) != mb.group(1):
            raise BiasampError(f"winobias: type {t} {split}: lines {a[:40]!r} and {b[:40]!r} "
                               "are not numbered sentences with the same number")
        out.append((int(ma.group(1)), ma.group(2), mb.group(2)))
    return out


def convert_winobias(path: str | os.PathLike, *, name: str = "winobias") -> Conversion:
    """Convert the WinoBias sentence files into a bound template set.

    Parameters
    ----------
    path : path-like
        The folder holding the eight ``{pro,anti}_stereotyped_type{1,2}.txt.{dev,test}``
        files (uclanlp/corefBias ``WinoBias/wino/data``); ``male_occupations.txt`` and
        ``female_occupations.txt`` there, if present, give the tasks' order and spelling.
    name : str
        The set's name.

    Returns
    -------
    Conversion
        The TOML text, the counts (sentences per file, templates, merged twins, per
        occupation, per pronoun case, agreeing verbs, per group) and the losses (each
        sentence that could not be converted, with the reason).

    Raises
    ------
    BiasampError
        A missing file, or pro/anti files that do not pair line by line.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise BiasampError(f"winobias: path must be the folder of the WinoBias files; got "
                           f"{str(path)!r}")
    files: dict = {}
    occupations = _occupations(folder, files)
    counts = {"cases": {}, "verbs": {}, "her_by_twin": 0, "her_by_next_word": 0,
              "normalised_spaces": 0, "literal_gendered": 0}
    entries, losses, sentences, merged, apart = [], [], {}, 0, 0
    for t in (1, 2):
        for split in ("dev", "test"):
            pairs = _read_pair(folder, t, split, files)
            sentences[f"type{t}-{split}"] = len(pairs)
            for n, pro, anti in pairs:
                base = {"id": f"t{t}-{split}-{n:03d}", "family": f"type{t}",
                        "groups": [f"type{t}", split]}
                parsed = {k: _parse(s, o, occupations, counts)
                          for k, s, o in (("pro", pro, anti), ("anti", anti, pro))}
                ok = {k: v for k, v in parsed.items() if not isinstance(v, str)}
                for k, v in parsed.items():
                    if isinstance(v, str):
                        losses.append(f"{k}_stereotyped_type{t}.txt.{split} line {n}: {v}")
                if len(ok) == 2 and ok["pro"] == ok["anti"]:
                    merged += 1
                    entries.append(_entry(
                        base, ok["pro"], suffix="", kinds=["pro", "anti"],
                        source=f"pro/anti_stereotyped_type{t}.txt.{split} line {n}"))
                    continue
                apart += len(ok) == 2
                for k, v in ok.items():
                    entries.append(_entry(base, v, suffix=f"-{k}", kinds=[k],
                                          source=f"{k}_stereotyped_type{t}.txt.{split} line {n}"))
    tasks = list(occupations.values()) or list(dict.fromkeys(e["task"] for e in entries))
    used = {e["task"] for e in entries}
    tasks = [x for x in tasks if x in used]
    summary = {
        "sentences": sentences, "sentences_total": sum(sentences.values()) * 2,
        "templates": len(entries), "pro_anti_twins_merged": merged,
        "pro_anti_twins_kept_apart": apart,
        "templates_per_occupation": {x: sum(e["task"] == x for e in entries) for x in tasks},
        "pronoun_cases": counts["cases"], "her_resolved_by_twin": counts["her_by_twin"],
        "her_resolved_by_next_word": counts["her_by_next_word"],
        "agreeing_verbs": dict(sorted(counts["verbs"].items(), key=lambda kv: -kv[1])),
        "two_pronoun_templates": sum(1 for e in entries if "context" in e),
        "a_an_referents": sum(1 for e in entries if "mask" in e and "attribute_to_task"
                              in e["mask"]),
        "sentences_with_literal_gendered_words": counts["literal_gendered"],
        "spaces_normalised": counts["normalised_spaces"],
        "groups": {g: sum(1 for e in entries if g in e["groups"]) for g in _GROUPS},
    }
    text = _toml(name, tasks=tasks, entries=entries, files=files, summary=summary, losses=losses)
    return Conversion(name, text, summary, losses, files)


def _ref(text: str, name: str) -> str:
    return name if text.lower().count("{" + name + "}") == 1 else f"{name}#1"


def _entry(base: dict, parsed: tuple, *, suffix: str, kinds: list, source: str) -> dict:
    text, task, n_pronouns, article = parsed
    e = {"id": base["id"] + suffix, "text": text, "task": task, "family": base["family"],
         "groups": base["groups"] + kinds, "source": source}
    mask = {}
    if n_pronouns > 1:
        first = re.search(r"\{(attribute[a-z_]*)\}", text, re.I).group(1).lower()
        mask["task_to_attribute"] = [_ref(text, first)]
        e["context"] = "per-attribute"
    if article:
        mask["attribute_to_task"] = ["a", "task"]
    if mask:
        e["mask"] = mask
    return e


def _toml(name, *, tasks, entries, files, summary, losses) -> str:
    return set_toml("winobias", {**_META, "name": name}, _GROUPS, tasks=tasks, entries=entries,
                    files=files, summary=summary, losses=losses,
                    source="# from the WinoBias files (sha256 in [set.converted] files).")
