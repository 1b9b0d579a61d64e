"""DefaultNormalizeScore (docs/scheduling-model.md, "Score normalization") and the args
validators."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_core.plugins.helper import default_normalize, label_name_problem


@pytest.mark.parametrize(("scores", "reverse", "expected"), [
    ([1, 2, 4], False, [25, 50, 100]),
    ([1, 2, 4], True, [75, 50, 0]),
    ([0, 0], False, [0, 0]),
    ([0, 0], True, [100, 100]),
    ([3, 0, 7], False, [42, 0, 100]),
    ([], True, []),
], ids=["plain", "reverse", "all-zero", "all-zero-reverse", "truncates", "empty"])
def test_default_normalize(scores, reverse, expected):
    arr = np.array(scores, dtype=np.int64)
    out = default_normalize(arr, reverse=reverse)
    assert out.tolist() == expected
    assert out.dtype == np.int64


@pytest.mark.parametrize(("name", "ok"), [
    ("example.com/gpu", True), ("gpu", True), ("a.b", True), ("-bad", False),
    ("Example.com/gpu", False), ("/gpu", False), ("example.com/", False), ("x" * 64, False),
])
def test_label_name_problem(name, ok):
    assert (label_name_problem(name) is None) == ok
