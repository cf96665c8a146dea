"""Tokenisation audit: which candidates are single pieces, which are split, which collide."""

from __future__ import annotations

from .._errors import BiasampError
from ._spans import BLANK, check_candidates, check_prompts, locate_spans

__all__ = ["audit_candidates", "candidate_pieces"]


def candidate_pieces(tokenizer, candidates, *, prompt=None, blank=BLANK):
    """Return the pieces (token strings) of each candidate, tokenised in ``prompt``.

    The default prompt ``"the [BLANK]"`` puts the candidate mid-sentence after a space (how
    templates use it; matters for BPE tokenizers, whose pieces carry the leading space).
    """
    if prompt is None:
        prompt = f"the {blank}"
    ((pre, post),) = check_prompts([prompt], blank)
    _, cands = check_candidates(candidates, 1)
    rows = [(pre + c + post, len(pre), len(pre) + len(c), prompt, c) for c in cands]
    spans = locate_spans(tokenizer, rows)
    return cands, [tuple(tokenizer.convert_ids_to_tokens(list(sp.pieces))) for sp in spans]


def audit_candidates(tokenizer, candidates, *, prompt=None, blank=BLANK):
    """Audit how a tokenizer splits candidate words.

    Parameters
    ----------
    tokenizer : transformers tokenizer, or str
        A loaded (fast) tokenizer, or a model name/folder to load one from.
    candidates : sequence of str, length k
    prompt : str, optional
        Context to tokenise the candidates in (contains ``blank`` once); default
        ``"the [BLANK]"`` (mid-sentence, after a space).
    blank : str

    Returns
    -------
    pandas.DataFrame of k rows, in the given order
        ``candidate``; ``pieces`` (tuple of str); ``n_pieces``; ``single_piece`` (bool);
        ``first_piece`` (str); ``shares_first_piece_with`` (tuple of the other candidates with
        the same first piece: ``first-piece`` scoring cannot tell them apart).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from transformers import BertTokenizer
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "vocab.txt").write_text("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[MASK]\\nthe\\nnurse\\nhair\\n##dresser\\n")
    >>> tok = BertTokenizer(str(d / "vocab.txt"))
    >>> audit_candidates(tok, ["nurse", "hairdresser"])[["candidate", "pieces", "single_piece"]]
         candidate             pieces  single_piece
    0        nurse           (nurse,)          True
    1  hairdresser  (hair, ##dresser)         False
    """
    import pandas as pd

    if isinstance(tokenizer, str):
        from ._load import load_tokenizer

        tokenizer = load_tokenizer(tokenizer)
    if not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise BiasampError(
            f"tokenizer must be a transformers tokenizer or a model name/folder; got "
            f"{type(tokenizer).__name__}")
    cands, pieces = candidate_pieces(tokenizer, candidates, prompt=prompt, blank=blank)
    firsts = [p[0] for p in pieces]
    rows = []
    for c, p, f in zip(cands, pieces, firsts):
        shares = tuple(o for o, fo in zip(cands, firsts) if fo == f and o != c)
        rows.append((c, p, len(p), len(p) == 1, f, shares))
    return pd.DataFrame(rows, columns=["candidate", "pieces", "n_pieces", "single_piece",
                                       "first_piece", "shares_first_piece_with"])
