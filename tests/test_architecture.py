"""The house rules (docs/architecture.md): ruff and import-linter check what pyproject.toml
configures; this file runs them, and checks only what a linter cannot."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "biasamp"
PLANTS = [  # imports planted in a copy of the package, each breaking a contract
    {"report/__init__.py": "def _f():\n    import torch\n"},  # inside a function too
    {"metrics/__init__.py": "from .. import pipeline\n"},
    {"report/_planted.py": "", "commands/__init__.py": "from ..report import _planted\n"},
]
LIGHT = """if True:  # `import biasamp` and `biasamp --help` are light; every module imports
    import contextlib, importlib, io, json, pkgutil, sys
    import biasamp
    heavy = lambda: [m for m in ("torch", "transformers", "matplotlib", "pandas") if m in sys.modules]
    bare = heavy()
    with contextlib.redirect_stdout(io.StringIO()):
        importlib.import_module("biasamp.cli").main(["--help"])
    walk = list(pkgutil.walk_packages(biasamp.__path__, "biasamp."))
    rooms = [importlib.import_module(m.name) for m in walk if m.ispkg] and heavy()
    n = len([importlib.import_module(m.name) for m in walk if "__main__" not in m.name])
    print(json.dumps([bare, rooms, n]))"""


def _run(*cmd, pythonpath=SRC.parent):
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)


@pytest.mark.parametrize("cmd", [["check"], ["format", "--check"]], ids=" ".join)
def test_ruff(cmd):  # the whole checkout; the layout is a rule too: `ruff format` before a commit
    out = _run(sys.executable, "-m", "ruff", *cmd, "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("plant", [{}, *PLANTS])
def test_import_contracts(tmp_path, plant):
    shutil.copytree(SRC, tmp_path / "biasamp", ignore=shutil.ignore_patterns("__pycache__"))
    for where, text in plant.items():
        with open(tmp_path / "biasamp" / where, "a", encoding="utf-8") as f:
            f.write("\n" + text)
    out = _run(Path(sys.executable).with_name("lint-imports"), "--no-cache", pythonpath=tmp_path)
    assert (out.returncode, "BROKEN" in out.stdout) == (int(bool(plant)), bool(plant)), out.stdout


def test_biasamp_is_light_and_every_module_imports():
    out = _run(sys.executable, "-c", LIGHT)
    assert out.returncode == 0, out.stderr
    bare, rooms, n = json.loads(out.stdout.splitlines()[-1])
    assert bare == [] and set(rooms) <= {"pandas"} and n > 20, (bare, rooms, n)


def test_the_files():
    """A module over 350 lines says why at its top. tests/NAME/ holds the tests of biasamp.NAME
    (of top-level modules and the whole: tests/); test modules are found, never imported."""
    texts = {p: p.read_text(encoding="utf-8") for p in SRC.rglob("*.py")}
    long = [p for p, t in texts.items() if t.count("\n") > 350]
    assert [p for p in long if "long on purpose:" not in texts[p][:2000]] == []
    tests = Path(__file__).parent
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    folders = {p.parent.relative_to(tests).as_posix() for p in tests.rglob("test_*.py")}
    assert folders - {"."} <= packages and not (tests / "__init__.py").exists()
    for path in tests.rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not any(n.startswith("test_") for n in names), path
