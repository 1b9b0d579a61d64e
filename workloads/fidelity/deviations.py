"""Known deviations: the disagreements with kube-scheduler that are deliberate.

The file (``known_deviations.yaml`` beside this module by default) lists entries; each names
the plugin, the stage and the case, and says why the core differs there. A difference the
fidelity check finds is *documented* when an entry matches it, else it is a disagreement
(``schedperf fidelity`` then exits 1). docs/fidelity.md's table of deviations is generated from
the same file (``render_table``; ``python -m workloads.fidelity.deviations docs/fidelity.md``
rewrites it, and a test keeps the two equal).

An entry::

    - id: volume-placeholders-prescore       # unique, [a-z0-9-]
      stage: Profile                         # PreFilter Filter PreScore Score PostFilter
                                             # Outcome Profile
      plugin: VolumeBinding                  # the plugin ("" for rows about no plugin)
      field: PreScore                        # optional regex (full match) on the field
      core: absent                           # optional regex (search) on the core's value
      reference: enabled                     # optional regex (search) on the reference's
      workload: "SchedulingBasic/.*"         # optional regex (search) on test case/workload
      case: a pod without volumes            # when it happens (for the table)
      reason: the core does not model volumes (issue 19)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler_core.inputfile import InputFileError, read_text
from workloads.fidelity.compare import Difference
from workloads.fidelity.errors import DeviationsFileError

__all__ = ["DEFAULT_DEVIATIONS", "STAGES", "Deviation", "load_deviations", "match",
           "render_table"]

DEFAULT_DEVIATIONS = Path(__file__).with_name("known_deviations.yaml")
STAGES = ("PreFilter", "Filter", "PreScore", "Score", "PostFilter", "Outcome", "Profile")
_REQUIRED = ("id", "stage", "plugin", "case", "reason")
_OPTIONAL = ("field", "core", "reference", "workload")
_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
_BEGIN = "<!-- known-deviations: generated from workloads/fidelity/known_deviations.yaml -->"
_END = "<!-- end of known-deviations -->"


@dataclass(frozen=True, slots=True)
class Deviation:
    id: str
    stage: str
    plugin: str
    case: str
    reason: str
    field: re.Pattern[str] | None = None
    core: re.Pattern[str] | None = None
    reference: re.Pattern[str] | None = None
    workload: re.Pattern[str] | None = None

    def matches(self, workload: str, d: Difference) -> bool:
        return (d.stage == self.stage and d.plugin == self.plugin
                and (self.field is None or self.field.fullmatch(d.field) is not None)
                and (self.core is None or self.core.search(d.core) is not None)
                and (self.reference is None or self.reference.search(d.reference) is not None)
                and (self.workload is None or self.workload.search(workload) is not None))


def _read(path: Path) -> Any:
    try:
        text = read_text(path, what="a known-deviations file")
    except InputFileError as exc:
        raise DeviationsFileError(str(exc)) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise DeviationsFileError(f"{path}{where}: not valid YAML: "
                                  f"{getattr(exc, 'problem', None) or exc}") from None


def _pattern(path: Path, where: str, value: Any) -> re.Pattern[str] | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise DeviationsFileError(f"{path}: {where}: expected a regular expression string")
    try:
        return re.compile(value)
    except re.error as exc:
        raise DeviationsFileError(f"{path}: {where}: not a regular expression: {exc}") from None


def _entry(path: Path, i: int, raw: Any) -> Deviation:
    where = f"deviations[{i}]"
    if not isinstance(raw, dict):
        raise DeviationsFileError(f"{path}: {where}: expected a mapping")
    for key in raw:
        if key not in _REQUIRED and key not in _OPTIONAL:
            raise DeviationsFileError(
                f"{path}: {where}.{key}: unknown field (expected one of: "
                f"{', '.join(_REQUIRED + _OPTIONAL)})")
    for key in _REQUIRED:
        value = raw.get(key)
        if not isinstance(value, str) or (key != "plugin" and not value.strip()):
            raise DeviationsFileError(f"{path}: {where}.{key}: required, a non-empty string"
                                      if key != "plugin" else
                                      f"{path}: {where}.plugin: required, a string")
    if not _ID.fullmatch(raw["id"]):
        raise DeviationsFileError(f"{path}: {where}.id: expected lower-case letters, digits "
                                  f"and '-', got {raw['id']!r}")
    if raw["stage"] not in STAGES:
        raise DeviationsFileError(f"{path}: {where}.stage: expected one of "
                                  f"{', '.join(STAGES)}, got {raw['stage']!r}")
    return Deviation(raw["id"], raw["stage"], raw["plugin"], raw["case"].strip(),
                     raw["reason"].strip(),
                     *(_pattern(path, f"{where}.{k}", raw.get(k)) for k in _OPTIONAL))


def load_deviations(path: Path | None = None) -> list[Deviation]:
    """The entries of a known-deviations file; DeviationsFileError names the file and field
    of anything malformed (an unknown field included)."""
    path = path or DEFAULT_DEVIATIONS
    data = _read(path)
    if not isinstance(data, dict) or set(data) != {"deviations"}:
        raise DeviationsFileError(f"{path}: expected a mapping with one key, deviations")
    entries = data["deviations"] or []
    if not isinstance(entries, list):
        raise DeviationsFileError(f"{path}: deviations: expected a list")
    out = [_entry(path, i, raw) for i, raw in enumerate(entries)]
    seen: set[str] = set()
    for i, dev in enumerate(out):
        if dev.id in seen:
            raise DeviationsFileError(f"{path}: deviations[{i}].id: {dev.id!r} is listed twice")
        seen.add(dev.id)
    return out


def match(deviations: Sequence[Deviation], workload: str, d: Difference) -> Deviation | None:
    """The first entry that documents ``d`` (seen in ``workload``), if any."""
    for dev in deviations:
        if dev.matches(workload, d):
            return dev
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_table(deviations: Sequence[Deviation]) -> str:
    """The markdown table docs/fidelity.md carries, between its generated-section markers."""
    lines = [_BEGIN, "", "| id | stage | plugin | case | reason |", "|---|---|---|---|---|"]
    for d in deviations:
        lines.append(f"| `{d.id}` | {d.stage} | {_cell(d.plugin) or '—'} | {_cell(d.case)} | "
                     f"{_cell(d.reason)} |")
    lines += ["", _END]
    return "\n".join(lines)


def replace_table(doc: str, table: str) -> str:
    """``doc`` with its generated section replaced by ``table``; ValueError without one."""
    start, end = doc.find(_BEGIN), doc.find(_END)
    if start < 0 or end < start:
        raise ValueError(f"no generated section ({_BEGIN} ... {_END})")
    return doc[:start] + table + doc[end + len(_END):]


def main(argv: Sequence[str]) -> int:
    """``python -m workloads.fidelity.deviations DOC``: rewrite DOC's generated table."""
    if len(argv) != 1:
        print("usage: python -m workloads.fidelity.deviations docs/fidelity.md", file=sys.stderr)
        return 2
    doc = Path(argv[0])
    try:
        text = replace_table(doc.read_text(encoding="utf-8"), render_table(load_deviations()))
    except (OSError, ValueError, DeviationsFileError) as exc:
        print(f"{doc}: {exc}", file=sys.stderr)
        return 2
    doc.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
