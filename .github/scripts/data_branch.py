"""Keep benchmark data (asv results, the schedperf store) on a git branch between CI runs.

    data_branch.py restore --branch asv-results --path .asv/results
    data_branch.py persist --branch asv-results --path .asv/results --message "..." \\
        [--ignore _ingest.lock]...

``restore`` checks the tip of ``--branch`` (fetched from ``--remote``, depth 1) out into
``--path`` as a ``git worktree`` of the current repository; when the branch does not exist
yet, ``--path`` becomes an empty orphan worktree of that name. ``persist`` commits everything
under ``--path`` (``--ignore`` patterns go to the branch's ``.gitignore``) as the GitHub
Actions bot and pushes it to ``--branch``; nothing to commit is not an error. A push that is
rejected because the branch moved meanwhile fails with a message: the workflows serialise
writers with concurrency groups, so that means a writer outside them.

A worktree shares the repository's configuration, so the push uses the credentials
actions/checkout stored (``persist-credentials`` must stay on in jobs that persist).
Standard library and git only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

BOT_NAME = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"


class DataBranchError(Exception):
    pass


def _git(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise DataBranchError(f"git {' '.join(args)}: {detail[-1] if detail else 'failed'}")
    return proc


def _check_branch(branch: str) -> None:
    if not branch or branch.startswith("-") or _git("check-ref-format", "--branch", branch,
                                                     check=False).returncode != 0:
        raise DataBranchError(f"{branch!r} is not a valid branch name")


def restore(branch: str, path: Path, remote: str = "origin") -> bool:
    """Check ``branch`` out into ``path``; True if it existed, False for a new orphan."""
    _check_branch(branch)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise DataBranchError(f"{path} exists and is not empty: restore into a new folder")
    listed = _git("ls-remote", "--heads", remote, f"refs/heads/{branch}").stdout.strip()
    if listed:
        _git("fetch", "--no-tags", "--depth=1", remote,
             f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")
        path.parent.mkdir(parents=True, exist_ok=True)
        _git("worktree", "add", "--force", "-B", branch, str(path), f"{remote}/{branch}")
        print(f"restored {remote}/{branch} into {path}")
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    _git("worktree", "add", "--force", "--detach", str(path), "HEAD")
    _git("checkout", "--quiet", "--orphan", branch, cwd=path)
    _git("rm", "-r", "-f", "--quiet", "--ignore-unmatch", ".", cwd=path)
    for entry in path.iterdir():  # untracked leftovers, never the .git link file
        if entry.name != ".git":
            raise DataBranchError(f"{entry}: left over after emptying the orphan worktree")
    print(f"{remote} has no branch {branch}: {path} starts empty (orphan {branch})")
    return False


def _write_ignores(path: Path, patterns: Sequence[str]) -> None:
    if not patterns:
        return
    gitignore = path / ".gitignore"
    lines = gitignore.read_text().splitlines() if gitignore.exists() else []
    new = [p for p in patterns if p not in lines]
    if new:
        gitignore.write_text("\n".join([*lines, *new]) + "\n")


def persist(branch: str, path: Path, message: str, *, ignore: Sequence[str] = (),
            remote: str = "origin", author: tuple[str, str] = (BOT_NAME, BOT_EMAIL)) -> bool:
    """Commit and push ``path`` to ``branch``; False when there was nothing to commit."""
    _check_branch(branch)
    if not (path / ".git").exists():
        raise DataBranchError(f"{path} is not a worktree made by 'restore'")
    current = _git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=path, check=False)
    if current.stdout.strip() != branch:
        raise DataBranchError(f"{path} has {current.stdout.strip() or 'a detached HEAD'} "
                              f"checked out, not {branch}")
    _write_ignores(path, ignore)
    _git("add", "--all", ".", cwd=path)
    staged = _git("diff", "--cached", "--quiet", cwd=path, check=False)
    has_head = _git("rev-parse", "--verify", "--quiet", "HEAD", cwd=path,
                    check=False).returncode == 0
    if staged.returncode == 0 and has_head:
        print(f"{path}: nothing changed, {branch} not pushed")
        return False
    name, email = author
    _git("-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "--quiet",
         "--allow-empty", "-m", message, cwd=path)
    push = _git("push", "--quiet", remote, f"HEAD:refs/heads/{branch}", cwd=path, check=False)
    if push.returncode != 0:
        detail = push.stderr.strip().splitlines()
        raise DataBranchError(
            f"pushing {branch} failed ({detail[-1] if detail else 'no message'}); if the "
            "branch moved meanwhile, another job wrote to it outside the concurrency group: "
            "rerun this job")
    print(f"pushed {path} to {remote}/{branch}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("restore", "persist"):
        p = sub.add_parser(name)
        p.add_argument("--branch", required=True)
        p.add_argument("--path", type=Path, required=True)
        p.add_argument("--remote", default="origin")
        if name == "persist":
            p.add_argument("--message", required=True)
            p.add_argument("--ignore", action="append", default=[], metavar="PATTERN")
    args = parser.parse_args(argv)
    try:
        if args.command == "restore":
            restore(args.branch, args.path, args.remote)
        else:
            persist(args.branch, args.path, args.message, ignore=args.ignore,
                    remote=args.remote)
    except DataBranchError as exc:
        print(f"::error title=data_branch {args.command}::{exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
