"""Which commits the main-branch asv job measures: those not measured yet, newest first.

    asv_commits.py --results .asv/results --machine github-actions --max 3 --out commits.txt

Walks the first-parent history back from ``--rev`` (default HEAD) and stops at the first
commit that already has an asv result for ``--machine`` (a ``commit_hash`` in
``<results>/<machine>/*.json``), taking at most ``--max`` commits. So a push of several
commits measures the newest ``--max`` of them, and commits of a run that was cancelled while
waiting in the concurrency queue are picked up by the next run. Writes one hash per line to
``--out`` (for ``asv run HASHFILE:<out>``), prints them, and appends ``count=<n>`` to
``$GITHUB_OUTPUT`` when that is set. Standard library and git only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def measured_commits(results: Path, machine: str) -> set[str]:
    """Full hashes with a result file for ``machine`` (unreadable files are ignored)."""
    folder = results / machine
    found: set[str] = set()
    if not folder.is_dir():
        return found
    for path in folder.glob("*.json"):
        if path.name == "machine.json":
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        commit = data.get("commit_hash") if isinstance(data, dict) else None
        if isinstance(commit, str):
            found.add(commit)
    return found


def commits_to_measure(rev: str, measured: set[str], limit: int, repo: Path = Path(".")
                       ) -> list[str]:
    proc = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent",
                           f"--max-count={limit}", rev, "--"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"error: git rev-list {rev}: {proc.stderr.strip()}")
    out = []
    for commit in proc.stdout.split():
        if commit in measured:
            break
        out.append(commit)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True, help="asv results_dir")
    parser.add_argument("--machine", required=True, help="asv machine name")
    parser.add_argument("--max", type=int, default=3, dest="limit")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error("--max must be at least 1")
    commits = commits_to_measure(args.rev, measured_commits(args.results, args.machine),
                                 args.limit)
    args.out.write_text("".join(c + "\n" for c in commits))
    print(f"{len(commits)} commit(s) to measure" + "".join(f"\n  {c}" for c in commits))
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a", encoding="utf-8") as fh:
            fh.write(f"count={len(commits)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
