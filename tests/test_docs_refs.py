"""Citations of the docs resolve, and nothing cites a document outside the repository.

Code and tests point readers to documentation as ``docs/<file>.md, "<Section>"`` (a file under
docs/ and the exact title of one of its headings, e.g. the sections of
docs/scheduling-model.md). The scan below fails on a citation whose file or heading does not
exist, on a mention of a docs/ file that does not exist, and on a "section sign + number"
citation: those cited the reference material kept outside the repository (../shared), which a
reader of the repository cannot follow.

The scan is first shown to catch a made-up section, a missing file and a section-sign citation
in a small tree written for the test (and to accept correct citations), then run on this
checkout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.shared import REPO_ROOT

ROOTS = ("scheduler_core", "workloads", "reports", "bench", "tests")
SUFFIXES = frozenset((".py", ".yaml", ".yml", ".js", ".json", ".md", ".toml", ".txt", ".sh"))
_DOC = r"docs/([A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*\.md)"
# the section may follow on the next line (after a comment's "#")
CITATION = re.compile(_DOC + r',\s*(?:#\s*)?"([^"\n]+)"')
MENTION = re.compile(_DOC)
SECTION_SIGN = re.compile("\u00a7\\s*\\d")  # spelled escaped so this file does not match
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def headings(markdown: str) -> set[str]:
    """The titles of the Markdown headings (``#`` to ``######``), outside code fences."""
    out: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            out.add(m.group(1))
    return out


def source_files(root: Path) -> list[Path]:
    """The text files under ``root``'s scanned packages (no caches, no hidden folders)."""
    out = []
    for name in ROOTS:
        for path in sorted((root / name).rglob("*")):
            rel = path.relative_to(root).parts
            if (path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in rel
                    and not any(p.startswith(".") for p in rel)):
                out.append(path)
    return out


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def scan(root: Path) -> list[Problem]:
    """Every unresolved docs citation or mention and every section-sign citation under
    ``root``'s scanned packages, sorted by file and line."""
    docs = root / "docs"
    titles: dict[str, set[str] | None] = {}  # docs file -> its headings (None: no such file)

    def titles_of(name: str) -> set[str] | None:
        if name not in titles:
            path = docs / name
            titles[name] = headings(path.read_text(encoding="utf-8")) if path.is_file() else None
        return titles[name]

    problems: set[Problem] = set()  # one per line and problem
    for path in source_files(root):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in MENTION.finditer(text):
            if titles_of(m.group(1)) is None:
                problems.add(Problem(rel, _line_of(text, m.start()),
                                        f"docs/{m.group(1)} does not exist"))
        for m in CITATION.finditer(text):
            found = titles_of(m.group(1))
            if found is not None and m.group(2) not in found:
                problems.add(Problem(rel, _line_of(text, m.start()),
                                        f'docs/{m.group(1)} has no section "{m.group(2)}"'))
        for m in SECTION_SIGN.finditer(text):
            line = text.split("\n")[_line_of(text, m.start()) - 1].strip()
            problems.add(Problem(rel, _line_of(text, m.start()),
                                    f"cites a section of a document outside the repository: "
                                    f"{line[:80]}"))
    return sorted(problems)


# --------------------------------------------------------------------------- the scan itself
D = "docs/"  # "docs/" and a file name are only joined at run time, so this file's own text
# holds no citation or mention for the scan of the checkout to check


def cite(doc: str, section: str) -> str:
    return D + doc + ', "' + section + '"'


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


MODEL = ("# Model\n\n## Backoff\n\ntext\n\n### NodeResourcesFit\n\n"
         "```\n## Not a heading (fenced)\n```\n")


def test_scan_accepts_correct_citations(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        f"{D}model.md": MODEL,
        "scheduler_core/a.py": f'"""Doubling waits ({cite("model.md", "Backoff")})."""\n',
        # split over two comment lines, and a plain mention of an existing file
        "tests/test_a.py": ("# the filter (" + cite("model.md", "NodeResourcesFit")
                            .replace(", ", ",\n# ") + f"), see also {D}model.md\n"),
        "workloads/configs/x.yaml": "# " + cite("model.md", "Model") + "\n",
    })
    assert scan(tmp_path) == []


def test_scan_reports_bad_citations(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        f"{D}model.md": MODEL,
        "scheduler_core/a.py": ('"""Fine: ' + cite("model.md", "Backoff") + ".\n\n"
                                "Made up: " + cite("model.md", "Backof") + '."""\n'),
        "bench/b.py": "# " + cite("nowhere.md", "Backoff") + "\n",
        "reports/c.py": "# only inside a fence: " + cite("model.md", "Not a heading (fenced)")
                        + "\n",
        "tests/test_c.py": '"""Effective requests (spec \u00a75.8.1)."""\n',
    })
    assert [str(p) for p in scan(tmp_path)] == [
        f"bench/b.py:1: {D}nowhere.md does not exist",
        f'reports/c.py:1: {D}model.md has no section "Not a heading (fenced)"',
        f'scheduler_core/a.py:3: {D}model.md has no section "Backof"',
        "tests/test_c.py:1: cites a section of a document outside the repository: "
        '"""Effective requests (spec \u00a75.8.1)."""',
    ]


# --------------------------------------------------------------------------- this checkout
def test_docs_citations_resolve() -> None:
    bad = [p for p in scan(REPO_ROOT) if "outside the repository" not in p.what]
    assert not bad, "unresolved docs citations:\n" + "\n".join(map(str, bad))


def test_no_citations_of_documents_outside_the_repository() -> None:
    bad = [p for p in scan(REPO_ROOT) if "outside the repository" in p.what]
    example = cite("scheduling-model.md", "Backoff")
    assert not bad, (f"cite a docs/ section instead, e.g. ({example}):\n"
                     + "\n".join(map(str, bad)))
