"""workloads.template: ``with``, ``range``, variables and the ``Int`` / ``JSON`` functions.

Every expected output is what Go's text/template (go1.26) printed for the same template and
data (ints as Go ``int``, the two functions as upstream's ``Int`` and ``JSON``); the error cases
check that bad input gives one located message.
"""

from __future__ import annotations

from typing import Any

import pytest

from workloads.template import Template, TemplateError

# id, template, data, what Go prints
GO_CASES: list[tuple[str, str, dict[str, Any], str]] = [
    # with
    ("with non-empty", "a{{with .p}}[{{.}}]{{end}}b", {"p": 5}, "a[5]b"),
    ("with zero", "a{{with .p}}[{{.}}]{{end}}b", {"p": 0}, "ab"),
    ("with missing key", "a{{with .p}}[{{.}}]{{end}}b", {}, "ab"),
    ("with else", "{{with .p}}yes {{.}}{{else}}no {{.q}}{{end}}", {"p": "", "q": "Q"}, "no Q"),
    ("with keeps $", "{{with .m}}{{.x}}-{{$.y}}{{end}}", {"m": {"x": 1}, "y": 2}, "1-2"),
    ("else with taken", "{{with .a}}A{{.}}{{else with .b}}B{{.}}{{else}}C{{.c}}{{end}}",
     {"a": 0, "b": "bee", "c": 3}, "Bbee"),
    ("else with to else", "{{with .a}}A{{.}}{{else with .b}}B{{.}}{{else}}C{{.c}}{{end}}",
     {"a": 0, "b": "", "c": 3}, "C3"),
    ("with declares", "{{with $x := .a}}{{$x}}{{.}}{{end}}{{$x := 1}}{{$x}}", {"a": 7}, "771"),
    ("with trim markers", "a\n  {{- with .p }}\n  p: {{ . }}\n  {{- end }}\nb", {"p": 3},
     "a\n  p: 3\nb"),
    ("with map dot", "{{with .m}}{{.k}}{{end}}", {"m": {"k": "v"}}, "v"),
    ("with empty list", "{{with .l}}x{{else}}empty{{end}}", {"l": []}, "empty"),
    # range
    ("range int", "{{range 3}}<{{.}}>{{end}}", {}, "<0><1><2>"),
    ("range int variable", "{{$n := 3}}{{range $i := $n}}{{$i}},{{.}};{{end}}", {},
     "0,0;1,1;2,2;"),
    ("range int zero else", "{{range 0}}x{{else}}none{{end}}", {}, "none"),
    ("range negative else", "{{range -2}}x{{else}}e{{end}}", {}, "e"),
    ("range int piped", "{{range $i := (.n | Int)}}{{$i}}{{end}}", {"n": 4}, "0123"),
    ("range list two vars", "{{range $i, $v := .l}}{{$i}}={{$v}} {{end}}", {"l": ["a", "b"]},
     "0=a 1=b "),
    ("range list one var", "{{range $v := .l}}{{$v}}{{.}} {{end}}", {"l": ["a", "b"]},
     "aa bb "),
    ("range map two vars", "{{range $k, $v := .m}}{{$k}}={{$v}} {{end}}",
     {"m": {"b": 2, "a": 1}}, "a=1 b=2 "),
    ("range map dot", "{{range .m}}{{.}} {{end}}", {"m": {"b": 2, "a": 1}}, "1 2 "),
    ("range map one var", "{{range $v := .m}}{{$v}}{{end}}", {"m": {"b": 2, "a": 1}}, "12"),
    ("range empty else", "{{range .l}}x{{else}}empty {{.z}}{{end}}", {"l": [], "z": "Z"},
     "empty Z"),
    ("range nil else", "{{range .n}}x{{else}}nil{{end}}", {"n": None}, "nil"),
    ("range keeps $", "{{range .l}}{{.}}{{$.s}}{{end}}", {"l": [1, 2], "s": "-"}, "1-2-"),
    ("range nested", "{{range $i := 2}}{{range $j := 2}}{{$i}}{{$j}}{{$.k}} {{end}}{{end}}",
     {"k": "K"}, "00K 01K 10K 11K "),
    ("range fields of elements", "{{range .l}}{{.a}}{{end}}", {"l": [{"a": 1}, {"a": 2}]}, "12"),
    ("break keeps what was printed",
     '{{range .l}}{{.}}{{if eq . "b"}}!{{break}}X{{end}}-{{end}}', {"l": ["a", "b", "c"]},
     "a-b!"),
    ("continue keeps what was printed",
     '{{range .l}}<{{if eq . "b"}}{{continue}}{{end}}{{.}}>{{end}}', {"l": ["a", "b", "c"]},
     "<a><<c>"),
    ("break and continue in nested ranges",
     "{{range $i := 3}}{{range 3}}{{if eq . 1}}{{break}}{{end}}{{.}}{{end}}"
     "{{if eq $i 1}}{{continue}}{{end}};{{end}}", {}, "0;00;"),
    ("break inside with", "{{range 2}}{{with 1}}{{break}}{{end}}{{end}}y", {}, "y"),
    ("range if inside", "{{range $i := 4}}{{if ge $i 2}}{{$i}}{{end}}{{end}}", {}, "23"),
    # variables
    ("assign in range", "{{$x := 1}}{{range .l}}{{$x = .}}{{end}}{{$x}}", {"l": [4, 5]}, "5"),
    ("inner declaration shadows", "{{$x := 1}}{{if true}}{{$x := 2}}{{$x}}{{end}}{{$x}}", {},
     "21"),
    ("declaration prints nothing", "[{{$x := 5}}]{{$x}}", {}, "[]5"),
    ("declared from or and Int", "{{$n := (or .n 1) | Int}}{{range $n}}{{.}}{{end}}", {}, "0"),
    ("variable field", "{{$m := .m}}{{$m.k}}", {"m": {"k": "v"}}, "v"),
    ("root variable in with", "{{with .a}}{{$}}{{end}}", {"a": 1}, "map[a:1]"),
    # or with a missing key, JSON
    ("or missing key", "{{or .missing 10}}", {}, "10"),
    ("or missing nil JSON", "{{(or .missing nil) | JSON}}", {}, "null"),
    ("JSON list of maps", "{{.l | JSON}}", {"l": [{"matchAttribute": "x", "b": 1}]},
     '[{"b":1,"matchAttribute":"x"}]'),
    ("JSON escapes html", '{{"<a&b>" | JSON}}', {}, '"\\u003ca\\u0026b\\u003e"'),
    ("JSON float", "{{.f | JSON}} {{.g | JSON}}", {"f": 2.0, "g": 0.5}, "2 0.5"),
    ("Int of float", "{{.f | Int}}", {"f": 2.9}, "2"),
]


@pytest.mark.parametrize(("text", "data", "expected"), [c[1:] for c in GO_CASES],
                         ids=[c[0] for c in GO_CASES])
def test_same_output_as_go(text: str, data: dict[str, Any], expected: str) -> None:
    assert Template(text, source="t.yaml").render(data) == expected


def test_fields_only_counts_the_root_data() -> None:
    t = Template("{{range .l}}{{.a}}{{$.b}}{{end}}{{with .m}}{{.c}}{{end}}{{.d}}")
    assert t.fields == frozenset({"l", "b", "m", "d"})


def test_range_budget_stops_a_huge_range_instead_of_hanging() -> None:
    huge = Template("{{range .n}}x{{end}}", source=SRC)
    with pytest.raises(TemplateError) as info:
        huge.render({"n": 2**63})
    assert str(info.value) == (f"{SRC}:1:3: range over {2**63} items would exceed 1000000 "
                               "range iterations in one render")
    nested = Template("{{range 1000}}{{range 1000}}{{end}}{{end}}{{range 1}}{{end}}", source=SRC)
    with pytest.raises(TemplateError, match="exceed 1000000"):
        nested.render({})
    assert Template("{{range 1000}}{{range 999}}{{end}}{{end}}").render({}) == ""
    assert huge.render({"n": 3}) == "xxx"  # the budget is per render


def test_variables_are_per_render() -> None:
    t = Template("{{$x := .n}}{{range .l}}{{$x = .}}{{end}}{{$x}}")
    assert t.render({"n": 1, "l": [2, 3]}) == "3"
    assert t.render({"n": 1, "l": []}) == "1"


SRC = "templates/x.yaml"

# id, template, data, the message (Go's own message, when it exists, says less)
ERRORS: list[tuple[str, str, dict[str, Any], str]] = [
    ("unclosed with", "a\n{{with .x}}b", {}, "2:1: {{with}} has no matching {{end}}"),
    ("with without end before else", "{{with .x}}b{{else}}c", {},
     "1:1: {{with}} has no matching {{end}}"),
    ("unclosed range", "{{range 3}}x", {}, "1:1: {{range}} has no matching {{end}}"),
    ("with without pipeline", "{{with}}x{{end}}", {}, "1:1: missing value for with"),
    ("range without pipeline", "{{range}}x{{end}}", {}, "1:1: missing value for range"),
    ("else if in a with", "{{with .a}}A{{else if .b}}B{{end}}", {},
     "1:20: {{else if}} in a {{with}}: expected {{else}}, {{else with}} or {{end}}"),
    ("else with in an if", "{{if .a}}A{{else with .b}}B{{end}}", {},
     "1:18: {{else with}} in a {{if}}: expected {{else}}, {{else if}} or {{end}}"),
    ("else with in a range", "{{range .a}}A{{else with .b}}B{{end}}", {},
     "1:21: expected {{else}} or {{end}} in a {{range}}, found {{else with}}"),
    ("two elses in a range", "{{range .l}}x{{else}}y{{else}}z{{end}}", {},
     "1:23: {{else}} after {{else}} in the same {{range}}"),
    ("two elses in a with", "{{with .l}}x{{else}}y{{else}}z{{end}}", {},
     "1:22: {{else}} after {{else}} in the same {{with}}"),
    ("variable out of scope", "{{if true}}{{$y := 2}}{{end}}{{$y}}", {},
     '1:32: undefined variable "$y"'),
    ("range variable out of scope", "{{range $i := 2}}{{end}}{{$i}}", {},
     '1:27: undefined variable "$i"'),
    ("assign undeclared", "{{$x = 1}}", {}, '1:3: undefined variable "$x"'),
    ("three range variables", "{{range $i, $v, $w := .l}}{{end}}", {},
     "1:9: bad variable declaration in range: want $x := pipeline or $i, $x := pipeline"),
    ("two variables in with", "{{with $i, $v := .l}}{{end}}", {},
     "1:8: bad variable declaration in with: want $x := pipeline"),
    ("break outside range", "{{break}}", {}, "1:3: {{break}} outside {{range}}"),
    ("continue in range else", "{{range 2}}x{{else}}{{continue}}{{end}}", {},
     "1:23: {{continue}} outside {{range}}"),
    ("break with an argument", "{{range 2}}{{break 1}}{{end}}", {},
     "1:20: unexpected '1' after break"),
    ("declare $", "{{$ := 1}}", {}, "1:3: cannot declare or assign $"),
    ("range over a string", "{{range .s}}x{{end}}", {"s": "ab"},
     "1:3: range can't iterate over ab"),
    ("range over a bool", "{{range true}}x{{end}}", {}, "1:3: range can't iterate over true"),
    ("range over a float", "{{range .f}}x{{end}}", {"f": 2.5},
     "1:3: range can't iterate over 2.5"),
    ("two variables over an int", "{{range $i, $v := 3}}{{end}}", {},
     "1:3: can't use 3 to iterate over more than one variable"),
    ("Int of a bool", "{{Int true}}", {},
     "1:3: error calling Int: cannot convert bool true to int"),
    ("JSON of NaN", "{{JSON .f}}", {"f": float("nan")},
     "1:3: error calling JSON: json: unsupported value: NaN"),
]


@pytest.mark.parametrize(("text", "data", "message"), [c[1:] for c in ERRORS],
                         ids=[c[0] for c in ERRORS])
def test_error_names_file_line_and_what_was_expected(text: str, data: dict[str, Any],
                                                     message: str) -> None:
    with pytest.raises(TemplateError) as info:
        Template(text, source=SRC).render(data)
    assert str(info.value) == f"{SRC}:{message}"
