"""bench.coverage.cover: the greedy weighted set cover, blind spots, import-time lines,
ranges and suggestions."""

from __future__ import annotations

import textwrap

import pytest

from bench.coverage.cover import LineRange, choose, line_ranges
from bench.coverage.statements import parse_statements

F = "scheduler_core/f.py"


def test_the_cheapest_cover_per_line_wins_and_measured_lines_need_nothing() -> None:
    changed = {F: {10, 11, 12, 20, 30, 40}}
    workloads = {
        "T/A": {F: {10, 11, 12}},
        "T/B": {F: {10, 11, 12, 20}},  # covers most, but costs most per line
        "T/C": {F: {20}},
        "T/E": {F: {30}},
        "T/D": {F: {30}},              # same cost as T/E: the lower name wins
        "T/M": {F: {12, 40}},          # measured anyway
    }
    costs = {"T/A": 3.0, "T/B": 10.0, "T/C": 1.0, "T/D": 5.0, "T/E": 5.0}
    got = choose(changed, workloads, costs, measured=["T/M"])
    assert [(a.name, [str(r) for r in a.lines]) for a in got.added] == [
        ("T/C", [f"{F}:20"]),          # 1 per line
        ("T/A", [f"{F}:10-11"]),       # 3 for 2 new lines (12 is measured already)
        ("T/D", [f"{F}:30"]),
    ]
    assert [str(r) for r in got.measured_cover] == [f"{F}:12", f"{F}:40"]
    assert got.blind_spots == () and got.import_time == ()
    assert got.changed == 6


def test_nothing_is_added_when_the_measured_workloads_cover_everything() -> None:
    got = choose({F: {1, 2}}, {"T/M": {F: {1, 2, 3}}, "T/X": {F: {1, 2}}}, {"T/X": 0.1},
                 measured=["T/M"])
    assert got.added == () and [str(r) for r in got.measured_cover] == [f"{F}:1-2"]


def test_the_choice_does_not_depend_on_the_order_workloads_come_in() -> None:
    names = [f"T/w{i}" for i in range(8)]
    workloads = {n: {F: {i % 3, 10 + i % 2}} for i, n in enumerate(names)}
    costs = dict.fromkeys(names, 1.0)
    one = choose({F: {0, 1, 2, 10, 11}}, workloads, costs)
    other = choose({F: {0, 1, 2, 10, 11}}, dict(reversed(workloads.items())),
                   dict(reversed(costs.items())))
    assert one == other
    assert [a.name for a in one.added] == ["T/w0", "T/w1", "T/w2"]


def test_a_workload_without_a_cost_is_an_error() -> None:
    with pytest.raises(ValueError, match="T/A"):
        choose({F: {1}}, {"T/A": {F: {1}}}, {})


SOURCE = textwrap.dedent("""\
    import os

    LIMIT = 3


    def scale(x):
        if x > LIMIT:
            y = x * 2
            # a comment between two statements
            z = y + 1
            return z
        w = x + 1
        return w


    def never(x):
        return x


    def other(x):
        a = x
        b = a
        return b
    """)


def at(text: str) -> int:
    return next(i for i, x in enumerate(SOURCE.splitlines(), 1) if x.strip() == text)


def test_blind_spots_import_time_lines_ranges_and_suggestions() -> None:
    stmts = parse_statements(SOURCE)
    executed_by_p = {at("def scale(x):"), at("if x > LIMIT:"), at("w = x + 1"),
                     at("return w"), at("def other(x):"), at("a = x"), at("b = a"),
                     at("return b")}
    workloads = {"T/P": {F: executed_by_p},
                 "T/Q": {F: {at("def other(x):"), at("a = x"), at("b = a"), at("return b")}}}
    changed = {F: {at("LIMIT = 3"), at("y = x * 2"), at("z = y + 1"), at("def never(x):"),
                   at("return x")}}
    got = choose(changed, workloads, {"T/P": 2.0, "T/Q": 1.0},
                 import_lines={F: {at("import os"), at("LIMIT = 3")}}, statements={F: stmts})
    # module level, executed by every import: not a blind spot
    assert got.import_time == (LineRange(F, at("LIMIT = 3"), at("LIMIT = 3")),)
    assert got.added == ()
    spots = {str(b.where): b for b in got.blind_spots}
    # y and z are consecutive statements (a comment between them): one range
    inner = spots[f"{F}:{at('y = x * 2')}-{at('z = y + 1')}"]
    assert inner.scope == "function scale"
    assert [(s.workload, s.line, s.distance) for s in inner.suggestions] == [
        ("T/P", at("if x > LIMIT:"), 1)]  # T/Q never runs scale
    # a function nobody runs, its def line included: suggestions come from the file
    never = spots[f"{F}:{at('def never(x):')}-{at('return x')}"]
    assert never.scope == "file"
    assert [(s.workload, s.distance) for s in never.suggestions] == [("T/Q", 3), ("T/P", 3)]
    assert len(got.blind_spots) == 2


def test_ranges_split_where_the_function_changes() -> None:
    stmts = parse_statements(SOURCE)
    lines = {at("return w"), at("def never(x):"), at("return x")}
    assert [str(r) for r in line_ranges(F, lines, stmts)] == [
        f"{F}:{at('return w')}", f"{F}:{at('def never(x):')}-{at('return x')}"]
    # without statements: consecutive numbers
    assert [str(r) for r in line_ranges(F, {1, 2, 3, 7})] == [f"{F}:1-3", f"{F}:7"]
