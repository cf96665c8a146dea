"""The house rules of docs/architecture.md, checked over the source (AST of every module,
imports inside functions included), so that a broken rule fails here, not in review."""

from __future__ import annotations

import ast
import io
import shutil
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "biasamp"

#: third-party packages only biasamp.scoring may import
HEAVY = ("torch", "transformers", "tokenizers", "safetensors", "huggingface_hub")
#: what each room may import from biasamp (besides itself); None = no rule
ALLOWED = {
    "metrics": {"_conventions", "_errors", "_validation", "_registry"},
    "report": {"_conventions", "_errors", "_validation", "_registry", "_files", "_output",
               "_progress", "results"},
    "results": {"_conventions", "_errors", "_validation", "_registry", "_files", "_output",
                "_schema"},
    "_schema": {"_conventions", "_errors"},
    "tasks": {"_conventions", "_errors", "_validation", "_registry", "_files", "_data"},
}
MAX_LINES = 350
#: third-party packages only biasamp.harness may import (the lm-evaluation-harness extra)
HARNESS_ONLY = ("lm_eval",)
#: rooms that may import only public names of other modules (shared biasamp._* helpers excepted)
PUBLIC_ONLY = ("commands", "harness")
#: most positional parameters of a function (self/cls not counted); the rest come after ``*``
MAX_POSITIONAL = 4
#: functions that take more, and why: "path under biasamp/:qualified name" -> reason
POSITIONAL_OK = {
    "pipeline/evaluate.py:evaluate_tables": "public contract: data arguments positional "
                                            "(sklearn style)",
    "cli.py:_Terminal.showwarning": "the warnings.showwarning protocol",
    "base_rates/_table.py:MissingEntriesError.__init__": "public exception of "
                                                         "biasamp.base_rates: its constructor "
                                                         "stays backward compatible",
    "corpus/_matching.py:HyperscanScanner.find_ids.<lambda>": "Hyperscan's match_event_handler "
                                                              "protocol (id, from, to, flags, "
                                                          "context)",
    "corpus/_rule_base.py:_rebuild": "pickle's __reduce__ protocol: called with the "
                                     "positional arguments CountingRule.__reduce__ returns",
}
#: modules that read a result's provenance: by attribute (biasamp.results.Provenance), never
#: with .get(...) or [...] on it
PROVENANCE_READERS = ("biasamp.report", "biasamp.pipeline.compare")
#: the one module that reads schema 2's "source|direction" base-rate keys
V2_KEYS = "biasamp._schema"


def _module_name(path: Path, src: Path) -> str:
    rel = path.relative_to(src.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, src: Path):
    """(line, absolute module name) of every import in the file, at any depth."""
    name = _module_name(path, src)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield node.lineno, mod, tuple(a.name for a in node.names)


def _positional(tree: ast.Module):
    """(qualified name, line, number of positional parameters) of every def and lambda;
    the first parameter of a method named self or cls is not counted."""
    def visit(node, prefix, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.", True)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                name = f"{prefix}{getattr(child, 'name', '<lambda>')}"
                params = [a.arg for a in child.args.posonlyargs + child.args.args]
                if in_class and params[:1] in (["self"], ["cls"]):
                    params = params[1:]
                yield name, child.lineno, len(params)
                yield from visit(child, f"{name}.", False)
            else:
                yield from visit(child, prefix, in_class)
    yield from visit(tree, "", False)


def violations(src: Path = SRC) -> list[str]:
    """Every broken rule under ``src`` (the package folder), one line each."""
    out = []
    allowed_seen = set()
    for path in sorted(src.rglob("*.py")):
        name = _module_name(path, src)
        room = name.split(".")[1] if "." in name else ""
        where = path.relative_to(src.parent)
        for line, mod, names in _imports(path, src):
            top = mod.split(".")[0]
            if top in HEAVY and room != "scoring":
                out.append(f"{where}:{line}: imports {mod} (only biasamp.scoring may)")
            if top in HARNESS_ONLY and room != "harness":
                out.append(f"{where}:{line}: imports {mod} (only biasamp.harness may)")
            if top != "biasamp" or room not in ALLOWED:
                continue
            target = mod.split(".")[1] if "." in mod else ""
            targets = {target} if target else {n for n in names}
            for t in targets - {room} - ALLOWED[room]:
                out.append(f"{where}:{line}: biasamp.{room} imports biasamp.{t}")
        if room in PUBLIC_ONLY:
            for line, mod, names in _imports(path, src):
                if mod == f"biasamp.{room}" or mod.startswith(f"biasamp.{room}."):
                    continue  # its own modules
                private_mod = any(p.startswith("_") and p != "__init__"
                                  for p in mod.split(".")[1:]) and not mod.startswith(
                    "biasamp._")  # shared helpers (_errors, _conventions, ...) are public to us
                private_name = mod.startswith("biasamp") and any(
                    n.startswith("_") for n in names)
                if private_mod or private_name:
                    out.append(f"{where}:{line}: biasamp.{room} imports a private name ({mod} "
                               f"{', '.join(names)})")
        if room != "scoring":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            out += [f"{where}:{node.lineno}: builds a scorer (only biasamp.scoring does: "
                    "load_scorer)" for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and getattr(node.func, "id", getattr(node.func, "attr", None))
                    in ("MaskedLMScorer", "CausalLMScorer")]
        if name != "biasamp._registry":
            out += [f"{where}:{line}: imports {mod} (a lazy import is a Registry entry "
                    "'module:object', biasamp._registry)"
                    for line, mod, names in _imports(path, src)
                    if mod == "importlib" and not names or "import_module" in names]
        out += [f"{where}:{line}: {what}" for line, what in _provenance_rules(path, name)]
        text = path.read_text(encoding="utf-8")
        n_lines = text.count("\n")
        if n_lines > MAX_LINES and "long on purpose:" not in text[:2000]:
            out.append(f"{where}: {n_lines} lines (> {MAX_LINES}) without a reason at the top")
        out += [f"{where}:{i}: backslash line continuation" for i in _continuations(text)]
        for qualname, line, n in _positional(ast.parse(text)):
            key = f"{path.relative_to(src).as_posix()}:{qualname}"
            if n <= MAX_POSITIONAL:
                continue
            if key in POSITIONAL_OK:
                allowed_seen.add(key)
            else:
                out.append(f"{where}:{line}: {qualname}() takes {n} positional parameters "
                           f"(> {MAX_POSITIONAL}): put the options after '*' (keyword-only), "
                           "or give the reason in POSITIONAL_OK")
    out += [f"{key}: in POSITIONAL_OK but no longer takes more than {MAX_POSITIONAL} "
            "positional parameters (or is gone): remove it" for key in POSITIONAL_OK
            if key not in allowed_seen]
    return out


def _is_provenance(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "provenance") or (
        isinstance(node, ast.Name) and node.id in ("prov", "provenance"))


def _provenance_rules(path: Path, name: str):
    """(line, what) of every broken provenance rule: a "source|direction" key built (an
    f-string joining two values with "|") or split (.partition("|") outside the schema-2
    reader); a reader of a result's provenance using .get or [...] on it; a ProbeResult
    given a dict literal as provenance (built only through biasamp.results.Provenance)."""
    reader = name.startswith(PROVENANCE_READERS)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.JoinedStr):
            parts = node.values
            if any(isinstance(c, ast.Constant) and c.value == "|"
                   and isinstance(a, ast.FormattedValue) and isinstance(b, ast.FormattedValue)
                   for a, c, b in zip(parts, parts[1:], parts[2:])):
                yield node.lineno, ('builds a "|"-joined key (provenance is nested by source, '
                                    "then direction)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if (node.func.attr in ("partition", "rpartition") and name != V2_KEYS
                    and any(isinstance(a, ast.Constant) and a.value == "|" for a in node.args)):
                yield node.lineno, ('splits a "|"-joined key (only biasamp._schema reads '
                                    "schema 2's)")
            if reader and node.func.attr == "get" and _is_provenance(node.func.value):
                yield node.lineno, "reads the provenance with .get (read it by attribute)"
        elif reader and isinstance(node, ast.Subscript) and _is_provenance(node.value):
            yield node.lineno, "reads the provenance with [...] (read it by attribute)"
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ProbeResult"
                and any(k.arg == "provenance" and isinstance(k.value, ast.Dict)
                        for k in node.keywords)):
            yield node.lineno, "gives ProbeResult a dict as provenance (build a Provenance)"


def _continuations(text: str) -> list[int]:
    """Lines ending in a backslash outside any string token (explicit line joins)."""
    strings = [(t.start, t.end) for t in tokenize.generate_tokens(io.StringIO(text).readline)
               if t.type == tokenize.STRING]
    found = []
    for i, raw in enumerate(text.splitlines(), 1):
        body = raw.rstrip()
        if not body.endswith("\\") or body.lstrip().startswith("#"):
            continue
        pos = (i, len(body) - 1)
        if not any(start <= pos < end for start, end in strings):
            found.append(i)
    return found


def test_the_source_follows_the_house_rules():
    assert violations() == []


def test_a_planted_torch_import_in_report_is_caught(tmp_path):
    pkg = tmp_path / "biasamp"
    shutil.copytree(SRC, pkg)
    assert violations(pkg) == []
    target = pkg / "report" / "_format.py"
    target.write_text(target.read_text() + "\n\ndef _sneaky():\n    import torch\n    return torch\n")
    found = violations(pkg)
    assert len(found) == 1 and "report/_format.py" in found[0] and "imports torch" in found[0]


@pytest.mark.parametrize("room, text, expected", [
    ("metrics/_ci.py", "from ..pipeline import probe\n", "biasamp.metrics imports biasamp.pipeline"),
    ("metrics/_ci.py", "def f():\n    from .. import scoring\n", "biasamp.metrics imports biasamp.scoring"),
    ("report/_render.py", "from ..scoring import ESTIMATORS\n", "biasamp.report imports biasamp.scoring"),
    ("pipeline/run.py", "import transformers\n", "imports transformers (only biasamp.scoring"),
    ("commands/report.py", "from ..report._format import markdown_table\n", "private name"),
    ("commands/report.py", "from ..report import _sections\n", "private name"),
    ("tasks.py", "x = 1 + \\\n    2\n", "backslash line continuation"),
    ("cli.py", "import importlib\n", "a lazy import is a Registry entry"),
    ("pairs/_run.py", "def f(m):\n    from ..scoring import MaskedLMScorer\n"
                      "    return MaskedLMScorer(m)\n", "builds a scorer"),
    ("scoring/__init__.py", "from importlib import import_module\n", "a lazy import is a Regi"),
    ("pipeline/run.py", "import lm_eval\n", "imports lm_eval (only biasamp.harness may)"),
    ("harness/__init__.py", "from ..pipeline._intervals import Resampling\n", "private name"),
    ("harness/__init__.py", "from ..scoring import _context\n", "private name"),
    ("metrics/_ci.py", "def _helper(a, b, c, d, e=None):\n    return a\n",
     "_helper() takes 5 positional parameters"),
    ("report/_render.py", "class _Planted:\n    def run(self, a, b, /, c, d, e):\n        return a\n",
     "_Planted.run() takes 5 positional parameters"),
    ("templates/_slots.py", "def _outer():\n    return lambda self, a, b, c, d: a\n",
     "_outer.<lambda>() takes 5 positional parameters"),
    ("pipeline/evaluate.py", "def f(name, direction):\n    return f'{name}|{direction}'\n",
     '"|"-joined key'),
    ("report/_sections.py", "def f(key):\n    return key.partition('|')[0]\n",
     'splits a "|"-joined key'),
    ("report/_compare.py", "def f(res):\n    return res.provenance.get('model')\n",
     "reads the provenance with .get"),
    ("pipeline/compare.py", "def f(prov):\n    return prov['tasks']\n",
     "reads the provenance with [...]"),
    ("pipeline/run.py", "def f(s):\n    return ProbeResult(summary=s, provenance={})\n",
     "gives ProbeResult a dict as provenance"),
    ("_schema.py", "from .results import ProbeResult\n",
     "biasamp._schema imports biasamp.results"),
])
def test_each_rule_fails_when_broken(tmp_path, room, text, expected):
    pkg = tmp_path / "biasamp"
    shutil.copytree(SRC, pkg)
    target = pkg / room
    target.write_text(target.read_text() + "\n" + text)
    assert any(expected in v for v in violations(pkg)), violations(pkg)


def test_keyword_only_and_self_are_not_positional_parameters(tmp_path):
    pkg = tmp_path / "biasamp"
    shutil.copytree(SRC, pkg)
    target = pkg / "metrics" / "_ci.py"
    target.write_text(target.read_text() + "\n\nclass _Planted:\n"
                      "    def run(self, a, b, c, d, *args, e, f, **kw):\n        return a\n\n"
                      "    @classmethod\n    def make(cls, a, b, c, d):\n        return a\n\n\n"
                      "def _helper(a, b, c, d, *, e, f, g):\n    return a\n")
    assert violations(pkg) == []


def test_a_stale_positional_allowance_is_reported(monkeypatch):
    monkeypatch.setitem(POSITIONAL_OK, "tasks.py:load_tasks", "planted")
    assert violations() == ["tasks.py:load_tasks: in POSITIONAL_OK but no longer takes more "
                            "than 4 positional parameters (or is gone): remove it"]


def test_a_long_module_needs_a_reason(tmp_path):
    pkg = tmp_path / "biasamp"
    shutil.copytree(SRC, pkg)
    target = pkg / "tasks.py"
    target.write_text(target.read_text() + "\n" * 400)
    assert any("tasks.py: " in v and "> 350" in v for v in violations(pkg))


def test_no_test_module_imports_another():
    for path in sorted(Path(__file__).parent.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0].startswith("test_") for n in names), path.name


def test_the_test_folders_mirror_src():
    """tests/NAME/ holds the tests of biasamp.NAME (a subpackage); tests of top-level modules
    (cli, results, _output, ...) and of the whole (architecture, benchmarks, real models) sit
    in tests/ itself."""
    tests = Path(__file__).parent
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    folders = {p.parent.relative_to(tests).as_posix() for p in tests.rglob("test_*.py")}
    assert folders - {"."} <= packages, sorted(folders - {"."} - packages)
    assert not (tests / "__init__.py").exists()  # test modules are found by their folders


def test_importing_biasamp_and_the_light_rooms_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, biasamp, biasamp.metrics, biasamp.report, biasamp.templates, "
            "biasamp.base_rates, biasamp.corpus, biasamp.tasks, biasamp.results, "
            "biasamp.pipeline, biasamp.scoring, biasamp.harness, biasamp.cli; "
            "biasamp.cli.build_parser(); "
            "print(sorted(m for m in ('torch', 'transformers', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
