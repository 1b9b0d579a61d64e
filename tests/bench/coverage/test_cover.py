"""bench.coverage.cover: the greedy weighted set cover, blind spots, import-time lines,
ranges and suggestions."""

from __future__ import annotations

import textwrap

import pytest

from bench.coverage.cover import LineRange, choose, line_ranges
from bench.coverage.statements import parse_statements
from reports.store.coverage import GeneratedOrigin

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


def origin(name: str, tags: tuple[str, ...]) -> GeneratedOrigin:
    seed, index = (int(x) for x in name.split("/")[0].split("_")[1:])
    return GeneratedOrigin(name, seed, index, tags, f"schedperf generate --seed {seed} "
                           f"--count {index + 1}", f"schedperf run --name '^{name}'")


def test_a_blind_spot_a_generated_scenario_covers_gets_its_command() -> None:
    stmts = parse_statements(SOURCE)
    y, z = at("y = x * 2"), at("z = y + 1")
    workloads = {"T/P": {F: {at("def scale(x):"), at("if x > LIMIT:"), at("w = x + 1")}}}
    generated = {
        "Generated_5_0/2Nodes": {F: {at("if x > LIMIT:"), y}},     # one line of the spot
        "Generated_5_1/3Nodes": {F: {at("if x > LIMIT:"), y, z}},  # all of it
        "Generated_5_2/4Nodes": {F: {at("a = x")}},                 # elsewhere
    }
    origins = {n: origin(n, tags) for n, tags in zip(generated, [
        ("requests", "hostPort"), ("requests", "racks"), ("requests",)], strict=True)}
    changed = {F: {y, z, at("b = a")}}
    got = choose(changed, workloads, {"T/P": 1.0, **dict.fromkeys(generated, 0.5)},
                 statements={F: stmts}, generated=generated, origins=origins)
    # the generated scenarios cover nothing and are never added: compare cannot measure them
    assert got.added == () and got.measured_cover == ()
    spots = {str(b.where): b for b in got.blind_spots}
    inner = spots[f"{F}:{y}-{z}"]
    assert inner.suggestions[0].workload == "T/P"  # the catalog's nearest stays as it was
    assert inner.generated_scope == "covered" and inner.covers_all
    assert inner.command == "schedperf generate --seed 5 --count 2"
    assert [(g.workload, g.covered) for g in inner.generated] == [
        ("Generated_5_1/3Nodes", (y, z)), ("Generated_5_0/2Nodes", (y,))]
    assert inner.tags == ()  # the two share only "requests", which the third has too
    # no scenario runs `b = a`: the nearest one (same function) and its telling tags
    other = spots[f"{F}:{at('b = a')}"]
    assert other.command is None and not other.covers_all
    assert other.generated_scope == "function other"
    assert [(g.workload, g.line, g.distance, g.covered) for g in other.generated] == [
        ("Generated_5_2/4Nodes", at("a = x"), 1, ())]
    assert other.tags == ()  # its only tag is everyone's
    as_dict = got.to_dict()["blind_spots"]
    assert as_dict[0]["command"] == "schedperf generate --seed 5 --count 2"
    assert as_dict[0]["suggestions"][0]["test_case"] == "T"
    assert as_dict[0]["generated"][0]["covered"] == [y, z]
    assert as_dict[1]["command"] is None and as_dict[1]["generated_scope"] == "function other"


def test_hint_tags_are_those_the_nearest_share_and_the_others_lack() -> None:
    stmts = parse_statements(SOURCE)
    generated = {"Generated_1_0/a": {F: {at("a = x")}}, "Generated_1_1/b": {F: {at("a = x")}},
                 "Generated_1_2/c": {F: {at("w = x + 1")}}}
    origins = {n: origin(n, tags) for n, tags in zip(generated, [
        ("requests", "hostPort", "racks"), ("requests", "hostPort"), ("requests", "racks")],
        strict=True)}
    got = choose({F: {at("b = a")}}, {}, {}, statements={F: stmts}, generated=generated,
                 origins=origins)
    (spot,) = got.blind_spots
    assert [g.workload for g in spot.generated] == ["Generated_1_0/a", "Generated_1_1/b"]
    assert spot.tags == ("hostPort",)
    with pytest.raises(ValueError, match="without an origin"):
        choose({F: {1}}, {}, {}, generated=generated, origins={})


def test_without_generated_scenarios_blind_spots_are_as_before() -> None:
    got = choose({F: {1}}, {"T/P": {F: {2}}}, {"T/P": 1.0})
    (spot,) = got.blind_spots
    assert (spot.generated, spot.generated_scope, spot.command, spot.tags) == ((), "none",
                                                                              None, ())
