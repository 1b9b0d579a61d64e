"""workloads.ops.scalar_patch: a rendering that differs from the first only in plain scalar
values gives exactly what a full parse gives; anything else is left to the full parse."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.ops.errors import WorkloadError
from workloads.ops.scalar_patch import ScalarPatch
from workloads.ops.templates import TemplateFile

BASE = """apiVersion: v1
kind: Pod
metadata:
  name: pod-0
  labels:
    app: web
    index: 0
spec:
  schedulingGroup:
    podGroupName: gang-0
  containers:
  - name: c
    image: pause
    resources:
      requests:
        cpu: 100m
"""


def _full(text: str) -> object:
    return yaml.safe_load(text)


def test_only_changed_values_are_replaced_and_each_result_is_a_fresh_copy() -> None:
    patch = ScalarPatch(BASE, _full(BASE))
    assert patch.usable
    other = BASE.replace("pod-0", "pod-7").replace("gang-0", "gang-2").replace("index: 0",
                                                                               "index: 7")
    got = patch.patched(other)
    assert got == _full(other)
    assert got["metadata"]["labels"]["index"] == 7  # resolved as YAML does: an int
    got["spec"]["containers"][0]["name"] = "mutated"
    assert patch.patched(BASE) == _full(BASE)  # callers' changes never reach the base


@pytest.mark.parametrize("value", ["true", "yes", "012", "0x1F", "1e3", "null", "~", "1:20",
                                   "2026-01-02", "3.5", ".inf", "it's", "a:b", "x#y"])
def test_values_resolve_as_in_a_full_parse(value: str) -> None:
    patch = ScalarPatch(BASE, _full(BASE))
    text = BASE.replace("app: web", f"app: {value}")
    assert patch.patched(text) == _full(text)


@pytest.mark.parametrize("value", ["'quoted'", '"dq"', "[1, 2]", "{a: 1}", "a: b", "x # c",
                                   "- x", "&a x", "!!str 1", "|", ">", "", " lead"])
def test_values_that_are_not_plain_scalars_are_left_to_the_full_parse(value: str) -> None:
    patch = ScalarPatch(BASE, _full(BASE))
    assert patch.patched(BASE.replace("app: web", f"app: {value}")) is None


@pytest.mark.parametrize("change", [
    ("  name: pod-0\n", "  name: pod-0\n  uid: x\n"),     # a line more
    ("    app: web\n", "    tier: web\n"),                # a key changed
    ("    app: web\n", "   app: web\n"),                  # indentation changed
    ("  - name: c\n", "  - name: d\n"),                   # a value on a "- " line: no slot
    ("    image: pause\n", "    image: pause # c\n"),    # a comment appended
])
def test_structural_changes_are_left_to_the_full_parse(change: tuple[str, str]) -> None:
    patch = ScalarPatch(BASE, _full(BASE))
    old, new = change
    assert old in BASE
    got = patch.patched(BASE.replace(old, new))
    # "- name: c" is a mapping value on the item's line: it has a slot, and patching it is right
    assert got is None or got == _full(BASE.replace(old, new))


@pytest.mark.parametrize("doc", [
    "a: &x {b: 1}\nc: *x\n",          # aliases share nodes
    "a: 1\na: 2\n",                  # a repeated key
    "1: a\nb: 2\n",                  # a non-string key
    "- 1\n- 2\n",                    # not a mapping
])
def test_documents_it_does_not_patch(doc: str) -> None:
    patch = ScalarPatch(doc, _full(doc))
    assert not patch.usable
    assert patch.patched(doc) is None


_SCALARS = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
            min_size=0, max_size=12),
    st.sampled_from(["true", "no", "0o7", "0b101", "-1", "+1", "1_000", "2026-01-02T03:04:05Z",
                     "NaN", ".nan", "=", "<<", "?x", "x:", "x: y"]),
)


@settings(max_examples=300, deadline=None)
@given(a=_SCALARS, b=_SCALARS)
def test_any_two_values_give_what_the_full_parse_gives(a: str, b: str) -> None:
    template = "kind: Pod\nmetadata:\n  name: {a}\n  labels:\n    k: {b}\n"
    first = template.format(a="p0", b="v0")
    patch = ScalarPatch(first, _full(first))
    text = template.format(a=a, b=b)
    got = patch.patched(text)
    if got is None:
        return
    want = _full(text)
    assert got == want
    for key in ("name",):
        assert type(got["metadata"][key]) is type(want["metadata"][key])
    assert type(got["metadata"]["labels"]["k"]) is type(want["metadata"]["labels"]["k"])


def test_template_file_objects_equal_full_parses(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-{{ .Index }}\n"
                    "  labels:\n    day: 2026-01-0{{ AddInt .Index 1 }}\n"
                    "{{ if eq .Index 3 }}    extra: x\n{{ end }}"
                    "spec:\n  schedulingGroup:\n    podGroupName: gang-{{ div .Index 3 }}\n")
    tf = TemplateFile(path)
    for i in range(6):
        got = tf.manifest(i, 6)
        assert got == _full(tf.template.render({"Index": i, "Count": 6}))
    assert tf.manifest(1, 6)["metadata"]["labels"]["day"] == datetime.date(2026, 1, 2)
    assert "extra" in tf.manifest(3, 6)["metadata"]["labels"]


def test_a_bad_rendering_after_the_first_is_still_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("kind: Pod\nmetadata:\n  name: {{ if eq .Index 2 }}[{{ else }}p{{ end }}\n")
    tf = TemplateFile(path)
    assert tf.manifest(0, 3)["metadata"]["name"] == "p"
    with pytest.raises(WorkloadError, match=r"pod.yaml \(Index 2\)"):
        tf.manifest(2, 3)
