"""Every command the README and the documentation site show runs, and prints what they show.

The convention (docs/development.md, "Runnable examples"): an HTML comment on the line before a
fenced block says what it is.

- ``<!-- run -->`` before a ``bash`` or ``python`` block: the tests run it (bash: ``bash -e -o
  pipefail``; python: the interpreter of the tests), in one temporary folder that holds
  links to the repository's data folders (``tests``, ``templates``, ``base_rates``, ``pairs``,
  ``examples``, ``scripts``), with ``biasamp`` and ``python`` on ``PATH`` meaning this
  interpreter. Blocks run in order, so a later block sees what an earlier one wrote; every
  page runs in the same folder, and a command an earlier page ran is not run again (its output
  is reused): a page shows commands that work from a fresh checkout on their own.
  ``~/.cache/biasamp/models/`` is the folder of the fetched real models (``BIASAMP_MODELS``).
- ``<!-- output -->`` before a ``text`` block: what the last run block printed (stdout and
  stderr as one stream, in the order they were written). Each shown line must appear in that order in what it prints now, a line ``...``
  standing for lines left out; numbers must agree to the last digit shown (one unit of it for
  rounding), and the words exactly.
- ``<!-- set-up -->``: an install command. It is not run again here (CI runs the install in
  ``.ci/run``): the venv and ``pip`` steps are dropped and the rest (fetching the model, the
  probe) runs like a run block.
- ``<!-- not run: REASON -->``: shown only; the reason is required (a hub model, the test
  command itself, a cluster).

A shell block with no marker fails the tests: every command shown says whether the tests run it.
Pages that use SmolLM2 (``smollm2-135m-instruct`` in a run block) need the real model
(tests/conftest.py's ``smollm2_dir``; skipped offline unless BIASAMP_REQUIRE_REAL_MODELS=1).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
try:
    import _hooks
finally:
    sys.path.remove(str(ROOT / "docs"))

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # the README runs first
LINKED = ("tests", "templates", "base_rates", "pairs", "examples", "scripts")
REAL = "~/.cache/biasamp/models/"
BLOCK = re.compile(
    r"^(?:<!-- (?P<marker>[^\n]*?) -->\n)?```(?P<lang>[a-z]*)[^\n]*\n(?P<body>.*?)^```\s*$",
    re.MULTILINE | re.DOTALL,
)
SETUP_STEPS = re.compile(r"^(python3 -m venv |\. \.venv|pip install )")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def blocks(page: Path):
    """[(marker, lang, body)] of every fenced block of a page, in order."""
    text = page.read_text("utf-8")
    return [(m["marker"], m["lang"], m["body"]) for m in BLOCK.finditer(text)]


def steps(page: Path):
    """[(kind, lang, text)]: 'run' blocks and the 'output' blocks that follow them."""
    out = []
    for marker, lang, body in blocks(page):
        if marker == "run" or (marker == "set-up" and lang == "bash"):
            if marker == "set-up":
                parts = [p.strip() for p in body.strip().split(" && ")]
                body = " && ".join(p for p in parts if not SETUP_STEPS.match(p)) + "\n"
            out.append(("run", lang, body))
        elif marker == "output":
            out.append(("output", lang, body))
    return out


def _pages_with_steps():
    return [p for p in PAGES if steps(p)]


# ------------------------------------------------------------------ the convention itself
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_shell_block_is_marked(page):
    for marker, lang, body in blocks(page):
        if lang not in ("bash", "sh", "shell", "console"):
            continue
        assert marker is not None, f"{page.name}: a shell block without a marker:\n{body}"
        ok = marker in ("run", "set-up") or re.fullmatch(r"not run: \S.*", marker)
        assert ok, f"{page.name}: unknown marker <!-- {marker} --> before:\n{body}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_output_follows_a_run(page):
    seen_run = False
    for marker, _, body in blocks(page):
        if marker in ("run", "set-up"):
            seen_run = True
        if marker == "output":
            assert seen_run, f"{page.name}: an output block with no run block before it:\n{body}"


def test_the_options_page_is_generated_from_the_config():
    from biasamp.pipeline.config import ProbeConfig

    page = (ROOT / "docs" / "options.md").read_text("utf-8")
    assert "<!-- generated: probe-options -->" in page
    filled = _hooks.fill(page)
    for name in ProbeConfig.model_fields:
        assert f"| `{name}` |" in filled, name
    assert "| `n_resamples` | `--n-resamples` | `10000` |" in filled


def test_the_results_page_is_generated_from_the_shipped_schema():
    import json
    from importlib import resources

    page = (ROOT / "docs" / "results-format.md").read_text("utf-8")
    filled = _hooks.fill(page)
    schema = json.loads(resources.files("biasamp").joinpath("results.schema.json").read_text())
    for name, spec in schema["$defs"].items():
        assert f"### {name}" in filled
        for key in spec["properties"]:
            assert f"| `{key}` |" in filled, (name, key)
    assert "| `schema_version` | `4` | yes |" in filled  # a const: the version it writes
    with pytest.raises(ValueError, match="unknown generated part 'nope'"):
        _hooks.fill("<!-- generated: nope -->")


def test_output_comparison_is_strict():
    shown = "  uniform  attribute_to_task  0.0028 ± 0.0054 [0.0004, 0.0052]\n...\nreport: x\n"
    printed = "head\n  uniform  attribute_to_task  0.0029 ± 0.0054 [0.0004, 0.0052]\nmid\nreport: x"
    _compare(shown, printed)  # one unit of the last digit: rounding
    with pytest.raises(AssertionError, match=r"printed 0\.0031"):
        _compare(shown, printed.replace("0.0029", "0.0031"))
    with pytest.raises(AssertionError, match="not printed"):
        _compare(shown, printed.replace("report", "rapport"))


# ------------------------------------------------------------------ running the pages
def _compare(shown: str, printed: str) -> None:
    """Each shown line appears, in order, in the printed text (``...`` skips lines)."""
    lines = [ln.rstrip() for ln in printed.splitlines()]
    at = 0
    for want in (ln.rstrip() for ln in shown.strip("\n").splitlines()):
        if want.strip() in ("...", "…"):
            continue
        pattern = NUMBER.sub("\x00", want)
        for i in range(at, len(lines)):
            if NUMBER.sub("\x00", lines[i]) == pattern:
                got_nums, want_nums = NUMBER.findall(lines[i]), NUMBER.findall(want)
                for g, w in zip(got_nums, want_nums):
                    unit = 10.0 ** -len(w.split(".")[1]) if "." in w and "e" not in w else 0
                    gv, wv = float(g.replace(",", "")), float(w.replace(",", ""))
                    tol = unit * 1.000001 if unit else abs(wv) * 1e-5
                    assert abs(gv - wv) <= tol, f"{want!r}: printed {g}, shown {w}"
                at = i + 1
                break
        else:
            raise AssertionError(f"not printed: {want!r}\nprinted:\n{printed}")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """One folder for every page, and what each command printed: a command that an earlier page
    ran already (the same text: the README's main job on the real-models page) is not run again,
    its output is reused, and its files are there."""
    tmp_path = tmp_path_factory.mktemp("docs")
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    for name, args in (("biasamp", "-m biasamp"), ("python", "")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {args} "$@"\n')
        shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        (work / name).symlink_to(ROOT / name)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleaved as they were written
    return work, env, {}


@pytest.mark.parametrize("page", _pages_with_steps(), ids=lambda p: p.name)
def test_page_runs_and_prints_what_it_shows(page, session, request):
    work, env, ran = session
    todo = steps(page)
    if any(REAL in text for kind, _, text in todo if kind == "run"):
        models = request.getfixturevalue("smollm2_dir").parent
    printed = None
    for kind, lang, text in todo:
        if kind == "output":
            assert printed is not None
            _compare(text.replace("/root/.cache/biasamp/models/", f"{REAL}"), printed)
            continue
        if REAL in text:
            text = text.replace(REAL, f"{models}/")
        if text in ran:
            printed = ran[text]
            continue
        argv = ["bash", "-e", "-o", "pipefail", "-c", text]
        if lang == "python":
            argv = [sys.executable, "-c", text]
        proc = subprocess.run(  # one stream, in the order a terminal shows it
            argv,
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=900,
            check=False,
        )
        printed = proc.stdout
        if REAL in "".join(t for _, _, t in todo):
            printed = printed.replace(f"{models}/", REAL)
        assert proc.returncode == 0, f"{page.name}: exit {proc.returncode}:\n{text}\n{printed}"
        ran[text] = printed
