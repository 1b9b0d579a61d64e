"""Print the malformed-input corpus as a matrix, input kind x failure class, each cell the
ids of the cases (tests/corpus/cases.py) that cover it: ``python -m tests.corpus.matrix``."""

from __future__ import annotations

from tests.corpus.cases import CASES, CLASSES, KINDS


def matrix() -> str:
    lines = ["| input kind | " + " | ".join(CLASSES) + " |",
             "|---|" + "---|" * len(CLASSES)]
    for kind in KINDS:
        cells = []
        for failure in CLASSES:
            ids = [c.id for c in CASES if c.kind == kind and c.failure == failure]
            cells.append("<br>".join(ids) if ids else "—")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    covered = sum(1 for k in KINDS for f in CLASSES
                  if any(c.kind == k and c.failure == f for c in CASES))
    lines.append("")
    lines.append(f"{len(CASES)} cases; {covered} of {len(KINDS) * len(CLASSES)} cells covered. "
                 "Each asserts exit 2, the file and the field (or problem) named, no "
                 "traceback; workload config, template, manifest and scheduler config cases "
                 "run both `validate` and `run` (which must not start), except the "
                 "scheduler-compare-* cases: `compare --base-config/--head-config`, which must "
                 "not make its output folder.")
    return "\n".join(lines)


if __name__ == "__main__":
    print(matrix())
