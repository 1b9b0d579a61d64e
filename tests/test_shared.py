"""tests/shared.py: ../shared is found from the repository root, never from an absolute path;
when it is missing a test that needs it skips, or fails under CI=true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import shared
from tests.shared import (
    REPO_ROOT,
    SHARED_DIR,
    UPSTREAM_DIR,
    require_shared,
    require_upstream,
    upstream_params,
)

TESTS = Path(__file__).resolve().parent
CONFIG = "- name: T\n  workloadTemplate: []\n  workloads: []\n"


def test_shared_is_looked_for_beside_the_repository_root() -> None:
    assert TESTS.parent == REPO_ROOT
    assert (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "tests").is_dir()
    assert REPO_ROOT.parent / "shared" == SHARED_DIR
    assert UPSTREAM_DIR == SHARED_DIR / "upstream" / "scheduler_perf"


@pytest.mark.parametrize("ci", [None, "", "false", "1"])
def test_missing_shared_skips_naming_the_path_outside_ci(tmp_path: Path, ci: str | None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    missing = tmp_path / "shared" / "upstream"
    with pytest.raises(pytest.skip.Exception) as info:
        require_shared(missing)
    assert str(missing) in str(info.value)
    assert str(REPO_ROOT) in str(info.value)


def test_missing_shared_fails_in_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    missing = tmp_path / "shared"
    with pytest.raises(pytest.fail.Exception) as info:
        require_shared(missing)
    assert str(missing) in str(info.value) and "CI=true" in str(info.value)


def test_present_shared_path_is_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    (tmp_path / "misc").mkdir()
    (tmp_path / "misc" / "performance-config.yaml").write_text(CONFIG)
    assert require_shared(tmp_path) == tmp_path
    assert require_upstream(tmp_path) == tmp_path


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception),
                                             ("false", pytest.skip.Exception)])
def test_upstream_folder_without_configs_counts_as_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str,
        outcome: type[BaseException]) -> None:
    monkeypatch.setenv("CI", ci)
    (tmp_path / "misc").mkdir()  # a folder, but no <topic>/performance-config*.yaml in it
    with pytest.raises(outcome, match="holds no"):
        require_upstream(tmp_path)


@pytest.mark.parametrize(("fixture", "attribute"), [("shared_dir", "SHARED_DIR"),
                                                     ("upstream_dir", "UPSTREAM_DIR")])
def test_fixtures_skip_or_fail_when_shared_is_missing(
        request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        fixture: str, attribute: str) -> None:
    monkeypatch.setattr(shared, attribute, tmp_path / "nowhere")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="nowhere"):
        request.getfixturevalue(fixture)


def test_upstream_params_placeholder_when_absent_or_empty(tmp_path: Path) -> None:
    def make(folder: Path) -> list[object]:
        return [pytest.param(p, id=p.parent.name)
                for p in sorted(folder.glob("*/performance-config*.yaml"))]

    for folder in (tmp_path / "absent", tmp_path):  # missing, then present but empty
        (placeholder,) = upstream_params(make, width=2, folder=folder)
        assert placeholder.values == (None, None) and placeholder.id == "upstream-absent"
    (tmp_path / "misc").mkdir()
    (tmp_path / "misc" / "performance-config.yaml").write_text(CONFIG)
    (param,) = upstream_params(make, folder=tmp_path)
    assert param.values == (tmp_path / "misc" / "performance-config.yaml",)
    assert param.id == "misc"


def test_no_test_hard_codes_an_absolute_shared_path() -> None:
    absolute = re.compile(r"""["'](/[\w.-]+)+/shared\b|["']/work/""")
    offenders = [f"{path.relative_to(TESTS)}:{n}"
                 for path in sorted(TESTS.rglob("*.py")) if path != Path(__file__).resolve()
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if absolute.search(line)]
    assert offenders == [], "use the shared_dir / upstream_dir fixtures (tests/shared.py)"
