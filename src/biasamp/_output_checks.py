"""What the output layer (:mod:`biasamp._output`) asks of a path before it writes: what kind of
thing is there, where a link leads, whether the name fits, which files of a folder biasamp
wrote, and how a failed write is told.

>>> kind_of("/dev/null")
'a character device'
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from pathlib import Path

from ._errors import BiasampError

__all__ = ["MARK", "Target", "check_name_fits", "entries", "fail_write", "follow_link",
           "found_kind", "kind_of", "writable_ancestor"]

log = logging.getLogger(__name__)

#: The mark of a folder biasamp wrote: its kind and the files it wrote (JSON).
MARK = ".biasamp.json"

#: The longest suffix biasamp puts on a name beside a target (``.NAME.replaced-PID-N``).
_SUFFIX_BYTES = len(".") + len(".replaced-") + 7 + len("-") + 8

#: errno values that mean "this could not be written", whatever the file.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO}


def kind_of(path) -> str | None:
    """What is at ``path`` (not following a link), in words; None when nothing is there."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    for test, words in ((stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"),
                        (stat.S_ISLNK, "a symbolic link"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"  # pragma: no cover - door (Solaris), whiteout (BSD)


def follow_link(path: Path, param: str) -> Path:
    """The path a target stands for: itself, or, for a symbolic link, the path the link names
    (which need not exist yet, but its folder must); a loop of links is refused."""
    if not os.path.islink(path):
        return path
    real = Path(os.path.realpath(path))
    try:
        os.stat(path)
    except FileNotFoundError:
        if not real.parent.is_dir():
            raise BiasampError(f"{param} {str(path)!r} is a symbolic link to {str(real)!r}, "
                               "whose folder does not exist") from None
    except OSError as exc:
        raise BiasampError(f"{param} {str(path)!r} is a symbolic link that cannot be "
                           f"followed: {exc.strerror}") from None
    log.info("%s %s is a symbolic link: writing %s", param, path, real)
    return real


class Target:
    """A path given as an output: ``named`` as given, ``path`` with a link followed
    (:func:`follow_link`), ``param`` the option that names it in messages."""

    def __init__(self, path, param: str):
        self.named = Path(os.path.expanduser(str(path)))
        self.param = param
        self.path = follow_link(self.named, param)

    @property
    def where(self) -> str:
        """``--out 'x'``, or ``--out 'x' (a link to 'y')``."""
        t = repr(str(self.named))
        return f"{self.param} " + (t if self.named == self.path
                                   else f"{t} (a link to {str(self.path)!r})")

    def check(self, want: str, why: str = "") -> str | None:
        """Refuse a name that is none, too long to stage beside, or under something that is
        not a writable folder, and a path that holds anything but ``want`` (``a folder`` or
        ``a file``); return ``want`` when it is there, None when nothing is."""
        t = self.path
        if not t.name or t.name in (".", ".."):
            raise BiasampError(f"{self.param} must name {want}; got {str(self.named)!r}")
        check_name_fits(t, writable_ancestor(t, self.param), self.param)
        kind = kind_of(t)
        if kind not in (None, want):
            expected = "a regular file" if want == "a file" else want
            raise BiasampError(f"{self.where} is {kind}, not {expected}{why}")
        return kind


def writable_ancestor(target: Path, param: str) -> Path:
    """The nearest existing folder above ``target``, checked to be a writable folder."""
    existing = next((a for a in target.parents if os.path.lexists(a)), None)
    if existing is None or not existing.is_dir():
        raise BiasampError(f"{param} {str(target)!r}: {str(existing)!r} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BiasampError(f"{param} {str(target)!r}: no permission to write in "
                           f"{str(existing)!r}")
    return existing


def check_name_fits(target: Path, existing: Path, param: str) -> None:
    """Refuse a name too long to be staged beside (the file system's name limit less the
    longest suffix biasamp adds)."""
    try:
        name_max = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):  # pragma: no cover - no such query on this system
        name_max = 255
    size = len(os.fsencode(target.name))
    if size + _SUFFIX_BYTES > name_max:
        raise BiasampError(f"{param} {str(target)!r}: the name is {size} bytes long; at most "
                           f"{name_max - _SUFFIX_BYTES} fit here (the file system allows "
                           f"{name_max}, and biasamp stages the result beside it under a "
                           "longer name)")


def entries(folder: Path) -> dict[str, str]:
    """Every file, link, special file and empty folder under ``folder`` (relative POSIX path
    -> kind in words; an empty folder ends with ``/``). Links to folders are not entered."""
    out: dict[str, str] = {}
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        rel = here.relative_to(folder)
        for d in [d for d in dirs if (here / d).is_symlink()]:
            dirs.remove(d)
            out[(rel / d).as_posix()] = "a symbolic link"
        for f in files:
            out[(rel / f).as_posix()] = kind_of(here / f) or "a file"
        if not dirs and not files and here != Path(folder):
            out[rel.as_posix() + "/"] = "a folder"
    return out


def _json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _complete_probe(folder: Path, prefix: str = "") -> set[str] | None:
    data = _json(folder / "results.json")
    if not isinstance(data, dict) or data.get("complete") is not True:
        return None
    files = data.get("files") if isinstance(data.get("files"), dict) else {}
    return {prefix + "results.json", *(prefix + str(f) for f in files)}


def _legacy(folder: Path) -> tuple[str | None, set[str]]:
    """The kind and files of a folder written before the mark (biasamp 0.2), from its own
    files; ``(None, set())`` when it is none of them."""
    names = {p.name for p in folder.iterdir()}
    comparison = {"comparison.md", "comparison.csv", "comparison.html", "paired_differences.csv"}
    owned = _complete_probe(folder)
    if owned is not None:
        return "probe", owned
    subs = [_complete_probe(p, p.name + "/") for p in folder.iterdir()
            if p.is_dir() and not p.is_symlink()]
    if any(s is not None for s in subs) and names & comparison:  # several models, one run
        return "probe", set().union(*(s for s in subs if s is not None)) | comparison
    if isinstance(_json(folder / "pairs.json"), dict):
        return "pairs", {"pairs.json", "pair_scores.csv", "pair_summary.csv"}
    if names & {"comparison.md", "comparison.csv"}:
        return "compare", comparison
    reports = {"report.md", "report.html", "report.json", "model_card.md"}
    if names & reports:
        return "report", reports | {n for n in names if n.endswith(".png")}
    return None, set()


def found_kind(folder: Path) -> tuple[str | None, set[str]]:
    """The kind of biasamp result ``folder`` holds and the files it wrote there, from the mark
    (or, for a folder of biasamp 0.2, from its own files); ``(None, set())`` for anything
    else."""
    mark = folder / MARK
    if mark.is_symlink() or not mark.exists():
        return _legacy(folder)
    data = _json(mark)
    if (not isinstance(data, dict) or not isinstance(data.get("kind"), str)
            or not isinstance(data.get("files"), list)):
        return None, set()
    return data["kind"], {str(f) for f in data["files"]}


def fail_write(exc: BaseException, where: str, folder: Path, note: str = "") -> None:
    """Raise an OS error met while writing ``where`` (a target in ``folder``) as one line
    naming the path; return for any other exception."""
    if not isinstance(exc, OSError):
        return
    name = exc.filename
    ours = name is not None and os.path.abspath(str(name)).startswith(
        os.path.join(os.path.abspath(folder), ""))
    if exc.errno not in _WRITE_ERRNOS and not ours:
        return
    what = f" {str(name)!r}" if name else ""
    raise BiasampError(f"{where}: could not write{what}: {exc.strerror or exc}; nothing was "
                       f"changed there{'; ' + note if note else ''}") from exc
