"""The PR benchmark's comment, step summary and verdict, from ``schedperf compare``'s output.

    bench_comment.py prepare --compare-out DIR --exit-code N --pr N --head-sha SHA
                             [--base-sha SHA] [--run-url URL] [--summary PATH] --out DIR
    bench_comment.py verdict --exit-code N

``prepare`` writes into ``--out`` the files the comment jobs read (pr-comment.yml reads them
from an artifact of a run that may have executed a fork's code, so it checks them again):
``comment.md`` (the report, or a note saying why there is none, and a footer), ``pr-number``,
``head-sha`` and ``exit-code``; with ``--summary`` it also appends the same text to that file
(``$GITHUB_STEP_SUMMARY``). It never fails because of the comparison: it runs after it, under
``if: always()``.

``verdict`` turns compare's exit status into the job's: 0 passes; 1 (a regression nobody
accepted) and 2 (a side failed: BASE or HEAD could not import its code, crashed or timed out,
and report.md opens with which and why; or bad input: a ref, a label,
``.schedperf/accepted.yaml``, and there is no report) fail with a one-line ``::error::``
annotation; an empty value (compare did not run or was killed) fails too.

Standard library only: it runs before and independently of the schedperf install.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

MARKER = "<!-- schedperf-report -->"
MAX_COMMENT_BYTES = 60_000  # GitHub refuses comments over 65,536 characters
_SHA = re.compile(r"[0-9a-f]{40}")
_PR = re.compile(r"[1-9][0-9]{0,9}")

EXPLAIN = {
    "0": None,
    "1": "**schedperf compare found a regression** (exit 1): see the report below.",
    "2": "**schedperf compare could not run: bad input** (exit 2), e.g. a ref, a label "
         "filter or `.schedperf/accepted.yaml`. The job log names the problem.",
    # exit 2 with a report: the comparison ran and a side failed (the report opens with it)
    "2+report": "**schedperf compare: a side failed** (exit 2): BASE or HEAD could not be "
                "measured. The report below opens with which side, which workloads and the "
                "end of the error.",
    "": "**The benchmark did not finish**: a setup step failed or the job hit its time "
        "limit, so there is no report. See the job log.",
}


def _explain(exit_code: str) -> str | None:
    if exit_code in EXPLAIN:
        return EXPLAIN[exit_code]
    return f"**schedperf compare failed** (exit {exit_code}): see the job log."


def _truncate(text: str, limit: int) -> str:
    data = text.encode()
    if len(data) <= limit:
        return text
    note = "\n\n*(report truncated: the full report is in the `schedperf-compare` artifact)*\n"
    cut = data[:limit - len(note.encode())].decode(errors="ignore")
    return cut.rsplit("\n", 1)[0] + note


def comment_text(report: str | None, exit_code: str, *, head_sha: str,
                 base_sha: str | None = None, run_url: str | None = None) -> str:
    """The comment (without the marker, which the upserting script adds)."""
    parts = []
    has_report = report is not None and bool(report.strip())
    explain = _explain(exit_code + "+report" if exit_code == "2" and has_report else exit_code)
    if explain:
        parts.append(explain)
    if report is not None and report.strip():
        parts.append(report.strip())
    elif exit_code in ("0", "1"):
        parts.append("*schedperf compare exited without writing report.md.*")
    footer = f"HEAD `{head_sha[:12]}`"
    if base_sha:
        footer = f"BASE `{base_sha[:12]}` (merge base) → " + footer
    if run_url:
        footer += f" · [workflow run]({run_url}) (HTML report: `schedperf-compare` artifact)"
    footer = f"<sub>{footer}</sub>"
    body = "\n\n".join(parts)
    return _truncate(body, MAX_COMMENT_BYTES - len(footer.encode()) - 8) + "\n\n" + footer + "\n"


def prepare(args: argparse.Namespace) -> int:
    exit_code = args.exit_code.strip()
    if not _PR.fullmatch(args.pr):
        print(f"error: --pr {args.pr!r} is not a pull request number", file=sys.stderr)
        return 2
    if not _SHA.fullmatch(args.head_sha):
        print(f"error: --head-sha {args.head_sha!r} is not a full commit hash", file=sys.stderr)
        return 2
    report_path = args.compare_out / "report.md"
    report = report_path.read_text(encoding="utf-8", errors="replace") \
        if report_path.is_file() else None
    text = comment_text(report, exit_code, head_sha=args.head_sha, base_sha=args.base_sha or None,
                        run_url=args.run_url or None)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "comment.md").write_text(text, encoding="utf-8")
    (out / "pr-number").write_text(args.pr + "\n")
    (out / "head-sha").write_text(args.head_sha + "\n")
    (out / "exit-code").write_text(exit_code + "\n")
    if args.summary is not None:
        with args.summary.open("a", encoding="utf-8") as fh:
            fh.write(text)
    print(f"wrote {out}/comment.md ({len(text.encode())} bytes) for PR #{args.pr}")
    return 0


def verdict(args: argparse.Namespace) -> int:
    exit_code = args.exit_code.strip()
    if exit_code == "0":
        print("schedperf compare: no unaccepted regression")
        return 0
    message = {
        "1": "schedperf compare found a significant regression that is not accepted "
             "(exit 1); see the report in the step summary or the PR comment",
        "2": "schedperf compare: a side failed or bad input (exit 2); the report opens with "
             "which side failed and why, else the 'Compare' step's log names the problem",
        "": "schedperf compare did not finish (no exit status); see the log",
    }.get(exit_code, f"schedperf compare failed with exit status {exit_code}")
    print(f"::error title=schedperf compare::{message}")
    try:
        code = int(exit_code)
    except ValueError:
        return 1
    return code if 0 < code < 256 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="write comment.md and the files pr-comment reads")
    p.add_argument("--compare-out", type=Path, required=True)
    p.add_argument("--exit-code", required=True, help="compare's exit status ('' if none)")
    p.add_argument("--pr", required=True)
    p.add_argument("--head-sha", required=True)
    p.add_argument("--base-sha", default="")
    p.add_argument("--run-url", default="")
    p.add_argument("--summary", type=Path, default=None)
    p.add_argument("--out", type=Path, required=True)
    v = sub.add_parser("verdict", help="exit like compare did, with an annotation")
    v.add_argument("--exit-code", required=True)
    args = parser.parse_args(argv)
    return prepare(args) if args.command == "prepare" else verdict(args)


if __name__ == "__main__":
    sys.exit(main())
