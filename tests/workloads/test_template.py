"""workloads.template: Go text/template as scheduler_perf uses it, checked construct by construct,
against Go's arithmetic and printing rules, on every upstream template, and message by message."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.shared import require_shared, upstream_params
from workloads.template import Template, TemplateError, render

D = {"Index": 7, "Count": 30}

# id, template, data (None: D), expected output
CONSTRUCTS: list[tuple[str, str, dict[str, Any] | None, str]] = [
    ("plain text", "kind: Pod\n", None, "kind: Pod\n"),
    ("empty template", "", None, ""),
    ("field", "name: pod-{{.Index}}", None, "name: pod-7"),
    ("field with spaces", "name: pod-{{ .Index }}", None, "name: pod-7"),
    ("two fields", "{{ .Index }}/{{ .Count }}", None, "7/30"),
    ("nested field", "{{ .A.B.C }}", {"A": {"B": {"C": "deep"}}}, "deep"),
    ("root $", "{{ $.Count }}", None, "30"),
    ("root $ nested", "{{ $.A.B }}", {"A": {"B": 1}}, "1"),
    ("dot prints the map", "{{ . }}", None, "map[Count:30 Index:7]"),
    ("string field raw", "{{ .S }}", {"S": "a: 'b'"}, "a: 'b'"),
    ("bool field", "{{ .B }}", {"B": True}, "true"),
    ("float field", "{{ .F }}", {"F": 0.35}, "0.35"),
    ("nil field", "{{ .N }}", {"N": None}, "<no value>"),
    ("list field", "{{ .L }}", {"L": [1, 2.5, "x", None]}, "[1 2.5 x <nil>]"),
    ("newline inside action", "{{\n  .Index\n}}", None, "7"),
    # literals
    ("int literal", "{{ 42 }}", None, "42"),
    ("negative int literal", "{{ -42 }}", None, "-42"),
    ("plus-signed literal", "{{ +5 }}", None, "5"),
    ("hex literal", "{{ 0x1F }}", None, "31"),
    ("octal literal legacy", "{{ 017 }}", None, "15"),
    ("octal literal 0o", "{{ 0o17 }}", None, "15"),
    ("binary literal", "{{ 0b101 }}", None, "5"),
    ("underscore literal", "{{ 1_000_000 }}", None, "1000000"),
    ("float literal", "{{ 2.5 }}", None, "2.5"),
    ("float literal leading dot", "{{ .5 }}", None, "0.5"),
    ("integral float literal", "{{ 3.0 }}", None, "3"),
    ("exponent literal", "{{ 1e3 }}", None, "1000"),
    ("hex float literal", "{{ 0x1p-2 }}", None, "0.25"),
    ("char literal", "{{ 'a' }}", None, "97"),
    ("char literal escape", r"{{ '\n' }}", None, "10"),
    ("string literal", '{{ "hello" }}', None, "hello"),
    ("string escapes", r'{{ "a\tb\n\"q\"\\" }}', None, 'a\tb\n"q"\\'),
    ("string hex/octal/unicode escapes", r'{{ "\x41\101\u00e9\U0001F600" }}', None, "AAé😀"),
    ("raw string", "{{ `a\\n{{b}}` }}", None, "a\\n{{b}}"),
    ("raw string over lines", "{{ `a\nb` }}", None, "a\nb"),
    ("true literal", "{{ true }}", None, "true"),
    ("false literal", "{{ false }}", None, "false"),
    # functions, older map
    ("mod", "8{{ mod .Index 12 }}", None, "87"),
    ("mod wraps", "{{ mod 31 12 }}", None, "7"),
    ("div", "{{ div 30000 .Count }}Mi", None, "1000Mi"),
    ("div truncates", "{{ div .Index 10 }}", None, "0"),
    ("mod takes an integral float literal like Go", "{{ mod 7.0 2 }}", None, "1"),
    # functions, newer map
    ("AddInt", "{{ AddInt .Index 1 }}", None, "8"),
    ("AddInt variadic", "{{ AddInt 1 2 3 4 }}", None, "10"),
    ("AddInt no args", "{{ AddInt }}", None, "0"),
    ("AddInt numeric string", '{{ AddInt "2" 3 }}', None, "5"),
    ("AddInt truncates the float sum", "{{ AddInt 1.5 1.6 }}", None, "3"),
    ("SubtractInt", "{{ SubtractInt .Count .Index }}", None, "23"),
    ("MultiplyInt", "{{ MultiplyInt .Index 2 3 }}", None, "42"),
    ("MultiplyInt no args", "{{ MultiplyInt }}", None, "1"),
    ("DivideInt", "{{ DivideInt .Count .Index }}", None, "4"),
    ("Mod", "{{ Mod .Count .Index }}", None, "2"),
    ("Mod truncates float args first", "{{ Mod 7.9 2 }}", None, "1"),
    ("AddFloat", "{{ AddFloat 1 1.5 }}", None, "2.5"),
    ("AddFloat integral prints as int", "{{ AddFloat 1 2 }}", None, "3"),
    ("SubtractFloat", "{{ SubtractFloat 0.3 0.1 }}", None, "0.19999999999999998"),
    ("MultiplyFloat", "{{ MultiplyFloat .Index 0.5 }}", None, "3.5"),
    ("DivideFloat", "{{ DivideFloat 1 4 }}", None, "0.25"),
    ("DivideFloat repeating", "{{ DivideFloat 1 3 }}", None, "0.3333333333333333"),
    # pipelines and parentheses
    ("pipe passes last argument", "{{ .Index | AddInt 3 }}", None, "10"),
    ("pipe order matters", "{{ 3 | SubtractInt 10 }}", None, "7"),
    ("pipe chain", "{{ .Index | MultiplyInt 2 | SubtractInt 100 }}", None, "86"),
    ("pipe into niladic call", "{{ 5 | AddInt }}", None, "5"),
    ("parenthesised argument", "{{ AddInt (mod .Index 3) 10 }}", None, "11"),
    ("nested parentheses", "{{ MultiplyInt (AddInt (mod .Index 4) 1) 2 }}", None, "8"),
    ("parenthesised pipeline", "{{ (.Index | AddInt 1) }}", None, "8"),
    ("field after parentheses", "{{ (.A).B }}", {"A": {"B": "x"}}, "x"),
    ("niladic call as argument", "{{ AddInt AddInt 2 }}", None, "2"),
    # trim markers and comments
    ("trim left", "a  \n\t{{- .Index }}", None, "a7"),
    ("trim right", "{{ .Index -}} \n  b", None, "7b"),
    ("trim both", "a \n {{- .Index -}} \n b", None, "a7b"),
    ("negative number is not a trim", "a {{-3}}", None, "a -3"),
    ("trim then number", "a {{- 3}}", None, "a3"),
    ("comment", "a{{/* note */}}b", None, "ab"),
    ("comment over lines", "a{{/* one\ntwo */}}b", None, "ab"),
    ("trimmed comment", "a \n {{- /* note */ -}} \n b", None, "ab"),
    ("comment keeps untrimmed space", "a {{/* x */}} b", None, "a  b"),
    ("comment-only template is static", "{{/* only */}}", None, ""),
    # if / else
    ("if true", "{{ if .B }}yes{{ end }}", {"B": True}, "yes"),
    ("if false", "{{ if .B }}yes{{ end }}", {"B": False}, ""),
    ("if else", "{{ if .B }}yes{{ else }}no{{ end }}", {"B": False}, "no"),
    ("else if first", "{{if lt .Index 3}}a{{else if lt .Index 10}}b{{else}}c{{end}}", None, "b"),
    ("else if last", "{{if lt .Index 3}}a{{else if lt .Index 5}}b{{else}}c{{end}}", None, "c"),
    ("else if without else", "{{if eq .Index 1}}a{{else if eq .Index 2}}b{{end}}", None, ""),
    ("nested if", "{{if .A}}{{if .B}}ab{{else}}a{{end}}{{end}}", {"A": 1, "B": 0}, "a"),
    ("if body with action", "{{ if .Index }}pod-{{ .Index }}{{ end }}", None, "pod-7"),
    ("if with trims", "x:\n{{- if .B }}\n  on{{ end }}", {"B": 1}, "x:\n  on"),
    ("if zero is false", "{{ if .Z }}t{{ else }}f{{ end }}", {"Z": 0}, "f"),
    ("if 0.0 is false", "{{ if .Z }}t{{ else }}f{{ end }}", {"Z": 0.0}, "f"),
    ("if empty string is false", "{{ if .Z }}t{{ else }}f{{ end }}", {"Z": ""}, "f"),
    ("if empty list is false", "{{ if .Z }}t{{ else }}f{{ end }}", {"Z": []}, "f"),
    ("if empty map is false", "{{ if .Z }}t{{ else }}f{{ end }}", {"Z": {}}, "f"),
    ("if nil is false", "{{ if .Z }}t{{ else }}f{{ end }}", {"Z": None}, "f"),
    ("if non-empty string is true", "{{ if .Z }}t{{ else }}f{{ end }}", {"Z": "0"}, "t"),
    ("if function result", "{{ if mod .Index 2 }}odd{{ else }}even{{ end }}", None, "odd"),
    # comparison and logic builtins
    ("eq", "{{ eq .Index 7 }}", None, "true"),
    ("eq any of several", "{{ eq .Index 1 2 7 }}", None, "true"),
    ("eq strings", '{{ eq .S "x" }}', {"S": "y"}, "false"),
    ("ne", "{{ ne .Index 7 }}", None, "false"),
    ("lt", "{{ lt .Index .Count }}", None, "true"),
    ("le", "{{ le 7 .Index }}", None, "true"),
    ("gt", "{{ gt 2.5 1.5 }}", None, "true"),
    ("ge", '{{ ge "a" "b" }}', None, "false"),
    ("not", "{{ not .Index }}", None, "false"),
    ("and returns the first empty", "{{ and 1 0 2 }}", None, "0"),
    ("and returns the last", "{{ and 1 2 }}", None, "2"),
    ("or returns the first non-empty", '{{ or 0 "" "x" 1 }}', None, "x"),
    ("and is lazy", "{{ and 0 (DivideInt 1 0) }}", None, "0"),
    ("or is lazy", "{{ or 1 .Missing }}", None, "1"),
]


@pytest.mark.parametrize(("text", "data", "want"), [c[1:] for c in CONSTRUCTS],
                         ids=[c[0] for c in CONSTRUCTS])
def test_construct_renders(text: str, data: dict[str, Any] | None, want: str) -> None:
    assert render(text, D if data is None else data) == want


# Go semantics of the arithmetic helpers: id, template, expected
GO_ARITHMETIC = [
    ("mod negative dividend keeps its sign", "{{ mod -7 3 }}", "-1"),
    ("mod negative divisor ignored for sign", "{{ mod 7 -3 }}", "1"),
    ("mod both negative", "{{ mod -7 -3 }}", "-1"),
    ("Mod negative dividend", "{{ Mod -7 3 }}", "-1"),
    ("Mod negative divisor", "{{ Mod 7 -3 }}", "1"),
    ("mod of multiple is zero", "{{ mod -12 12 }}", "0"),
    ("div truncates toward zero (negative)", "{{ div -7 2 }}", "-3"),
    ("div truncates toward zero (positive)", "{{ div 7 2 }}", "3"),
    ("div negative divisor", "{{ div 7 -2 }}", "-3"),
    ("DivideInt truncates toward zero", "{{ DivideInt -7 2 }}", "-3"),
    ("DivideInt of floats", "{{ DivideInt 7.5 2.5 }}", "3"),
    ("AddInt truncates toward zero", "{{ AddInt -1.5 -1.6 }}", "-3"),
    ("SubtractInt truncates", "{{ SubtractInt 1 0.5 }}", "0"),
    ("MultiplyInt through float64", "{{ MultiplyInt 2.5 2 }}", "5"),
    ("AddInt loses int precision like float64", "{{ AddInt 9007199254740993 0 }}",
     "9007199254740992"),
]


@pytest.mark.parametrize(("text", "want"), [c[1:] for c in GO_ARITHMETIC],
                         ids=[c[0] for c in GO_ARITHMETIC])
def test_go_arithmetic(text: str, want: str) -> None:
    assert render(text, D) == want


# float64 printed as Go's fmt %v: value, expected
GO_FLOATS = [
    (2.5, "2.5"),
    (3.0, "3"),
    (0.35, "0.35"),
    (100.0, "100"),
    (123456.0, "123456"),
    (1e6, "1e+06"),
    (1234567.8, "1.2345678e+06"),
    (1e21, "1e+21"),
    (1.5e300, "1.5e+300"),
    (0.0001, "0.0001"),
    (0.00015, "0.00015"),
    (1e-5, "1e-05"),
    (0.1 + 0.2, "0.30000000000000004"),
    (5e-324, "5e-324"),
    (-2.5, "-2.5"),
    (-1e6, "-1e+06"),
    (0.0, "0"),
    (-0.0, "-0"),
    (math.inf, "+Inf"),
    (-math.inf, "-Inf"),
    (math.nan, "NaN"),
]


@pytest.mark.parametrize(("value", "want"), GO_FLOATS, ids=[w for _, w in GO_FLOATS])
def test_float_prints_like_go(value: float, want: str) -> None:
    assert render("{{ .F }}", {"F": value}) == want


def test_numpy_scalars_print_like_go_numbers() -> None:
    np = pytest.importorskip("numpy")
    data = {"I": np.int64(7), "F": np.float64(2.0)}
    assert render("{{ .I }} {{ .F }} {{ mod .I 4 }}", data) == "7 2 3"


# Every error, exactly: id, template, data (None: D), message
SRC = "templates/pod.yaml"


def at(position: str, problem: str) -> str:
    """The full message for a problem at "line:column" of SRC."""
    return f"{SRC}:{position}: {problem}"


UNSUPPORTED_NOTE = "is not supported by this renderer (it implements if, with, range, break, " \
    "continue, else and end; upstream templates use no other)"
ERRORS: list[tuple[str, str, dict[str, Any] | None, str]] = [
    ("unknown function", "kind: Pod\nspec:\n  port: 8{{ modd .Index 12 }}", None,
     at("3:13", 'unknown function "modd" (did you mean "mod"?)')),
    ("unknown function, wrong case", "{{ addint 1 }}", None,
     at("1:4", 'unknown function "addint" (did you mean "AddInt"?)')),
    ("unknown function, nothing close", "{{ printf 1 }}", None,
     at("1:4", 'unknown function "printf"')),
    ("undefined field", "a: 1\nname: pod-{{ .Indx }}", None,
     at("2:14", "undefined field .Indx (available: .Count, .Index)")),
    ("undefined nested field", "{{ .A.C }}", {"A": {"B": 1}},
     at("1:4", "undefined field .A.C (available: .A.B)")),
    ("undefined field under $", "{{ $.Indx }}", None,
     at("1:4", "undefined field $.Indx (available: $.Count, $.Index)")),
    ("undefined field, empty data", "{{ .Index }}", {},
     at("1:4", "undefined field .Index (available: none)")),
    ("field of a non-map", "{{ .Index.A }}", None,
     at("1:4", "can't evaluate field .Index.A: .Index is int 7, not a map")),
    ("field of a non-map result", "{{ (mod .Index 3).X }}", None,
     at("1:4", "can't evaluate field (mod .Index 3).X: (mod .Index 3) is int 1, not a map")),
    ("unclosed action", "a\nb: {{ .Index\n", None,
     at("2:4", 'unclosed action: no closing "}}"')),
    ("unclosed action before next action", "{{ .Index \n{{ .Count }}", None,
     at("1:1", 'unclosed action: no closing "}}" before the next "{{"')),
    ("unclosed comment", "x {{/* never", None, at("1:3", "unclosed comment: no closing */")),
    ("comment not at the delimiter", "{{ /* x */ }}", None,
     at("1:4", 'a comment must follow "{{" or "{{- " directly: {{/* ... */}}')),
    ("comment with text before the delimiter", "{{/* x */ .Index }}", None,
     at("1:8", 'comment ends before the closing "}}"')),
    ("empty action", "{{ }}", None, at("1:1", "empty action: missing value")),
    ("unexpected end", "a\n{{ end }}", None, at("2:1", "unexpected {{end}}")),
    ("unexpected else", "{{ else }}", None, at("1:1", "unexpected {{else}}")),
    ("if without end", "x\n{{ if .Index }}y", None,
     at("2:1", "{{if}} has no matching {{end}}")),
    ("if else without end", "{{ if .Index }}y{{ else }}n", None,
     at("1:1", "{{if}} has no matching {{end}}")),
    ("two elses", "{{if 1}}a{{else}}b{{else}}c{{end}}", None,
     at("1:19", "{{else}} after {{else}} in the same {{if}}")),
    ("if without condition", "{{ if }}x{{ end }}", None, at("1:1", "missing value for if")),
    ("tokens after end", "{{ if 1 }}x{{ end .Index }}", None,
     at("1:19", "unexpected '.Index' after end")),
    ("define unsupported", '{{ define "x" }}x{{ end }}', None,
     at("1:4", "{{define}} " + UNSUPPORTED_NOTE)),
    ("block unsupported", '{{ block "x" . }}x{{ end }}', None,
     at("1:4", "{{block}} " + UNSUPPORTED_NOTE)),
    ("variable declared mid-pipeline", "{{ $y := 1 }}{{ not $y := 1 }}", None,
     at("1:24", "unexpected ':=': a variable is declared as {{$x := pipeline}} at the start "
                "of an action")),
    ("undefined variable", "{{ $x }}", None, at("1:4", 'undefined variable "$x"')),
    ("mod too few args", "{{ mod .Index }}", None,
     at("1:4", "wrong number of arguments for mod: want 2, got 1")),
    ("div too many args", "{{ div 1 2 3 }}", None,
     at("1:4", "wrong number of arguments for div: want 2, got 3")),
    ("piped value counts as an argument", "{{ 1 | mod 2 3 }}", None,
     at("1:8", "wrong number of arguments for mod: want 2, got 3")),
    ("SubtractInt one arg", "{{ SubtractInt 1 }}", None,
     at("1:4", "wrong number of arguments for SubtractInt: want 2, got 1")),
    ("eq one arg", "{{ eq 1 }}", None,
     at("1:4", "wrong number of arguments for eq: want at least 2, got 1")),
    ("mod float literal", "{{ mod .Index 2.5 }}", None,
     at("1:15", "wrong type for argument 2 of mod: want int, got float64 2.5")),
    ("mod string literal", '{{ mod "7" 2 }}', None,
     at("1:8", 'wrong type for argument 1 of mod: want int, got string "7"')),
    ("div float field", "{{ div .F 2 }}", {"F": 2.0},
     at("1:8", "wrong type for argument 1 of div: want int, got float64 2")),
    ("div bool field", "{{ div 2 .B }}", {"B": True},
     at("1:10", "wrong type for argument 2 of div: want int, got bool true")),
    ("mod piped float", "{{ .F | mod 2 }}", {"F": 1.5},
     at("1:9", "wrong type for argument 2 of mod: want int, got float64 1.5")),
    ("mod by zero", "{{ mod .Index 0 }}", None,
     at("1:4", "error calling mod: integer divide by zero")),
    ("div by zero", "{{ div .Index 0 }}", None,
     at("1:4", "error calling div: integer divide by zero")),
    ("Mod by zero", "{{ Mod .Index 0 }}", None,
     at("1:4", "error calling Mod: integer divide by zero")),
    ("DivideInt by zero", "{{ DivideInt .Index 0 }}", None,
     at("1:4", "error calling DivideInt: division by zero")),
    ("DivideFloat by zero", "{{ DivideFloat 1 0.0 }}", None,
     at("1:4", "error calling DivideFloat: division by zero")),
    ("AddInt non-numeric string", '{{ AddInt "abc" 1 }}', None,
     at("1:4", 'error calling AddInt: cannot cast string "abc" to float64')),
    ("AddFloat bool", "{{ AddFloat true }}", None,
     at("1:4", "error calling AddFloat: cannot cast bool true to float64")),
    ("AddInt infinity", "{{ AddInt .F }}", {"F": math.inf},
     at("1:4", "error calling AddInt: cannot convert +Inf to int")),
    ("eq int and float", "{{ eq 1 1.0 }}", None,
     at("1:4", "error calling eq: incompatible types for comparison: int and float64")),
    ("lt on bools", "{{ lt true false }}", None,
     at("1:4", "error calling lt: cannot order bool and bool")),
    ("field given arguments", "{{ .Index 3 }}", None,
     at("1:4", ".Index is not a function: it takes no arguments")),
    ("pipe into a field", "{{ .Index | .Count }}", None,
     at("1:13", "cannot pipe into .Count: only a function takes a piped value")),
    ("pipe into nothing", "{{ .Index | }}", None, at("1:1", "missing command after | in action")),
    ("nil alone", "{{ nil }}", None, at("1:4", "nil is not a command")),
    ("unclosed paren", "{{ (mod 1 2 }}", None, at("1:4", 'unclosed left paren: missing ")"')),
    ("stray right paren", "{{ .Index ) }}", None, at("1:11", "unexpected ')' after the pipeline")),
    ("bad number", "{{ 1.5.3 }}", None, at("1:4", "bad number syntax: 1.5.3")),
    ("number with letters", "{{ 12ab }}", None, at("1:4", "bad number syntax: 12ab")),
    ("int64 overflow", "{{ 9223372036854775808 }}", None,
     at("1:4", "number 9223372036854775808 overflows int64")),
    ("complex number", "{{ 2i }}", None, at("1:4", "complex number 2i is not supported")),
    ("unterminated string", '{{ "abc }}', None, at("1:4", "unterminated quoted string")),
    ("unterminated raw string", "{{ `abc }}", None, at("1:4", "unterminated raw string")),
    ("unknown escape", r'{{ "\q" }}', None, at("1:4", "unknown escape sequence \\q")),
    ("bad char constant", "{{ 'ab' }}", None, at("1:4", "malformed character constant 'ab'")),
    ("trim marker without space", "{{ .Index-}}", None,
     at("1:10", "unexpected '-' after .Index (a trim marker needs white space before it: "
                '" -}}")')),
    ("stray character", "{{ .Index # }}", None, at("1:11", "unexpected '#' in action")),
    ("literal followed by a field", '{{ "a".B }}', None,
     at("1:7", "unexpected 'B' after a literal")),
    ("keyword inside a command", "{{ .Index | if }}", None,
     at("1:13", "unexpected 'if' in command")),
    ("comma", "{{ .A, .B }}", {"A": 1, "B": 2},
     at("1:6", "unexpected ',' (only range declares two variables: "
               "{{range $i, $x := pipeline}})")),
]


@pytest.mark.parametrize(("text", "data", "message"), [c[1:] for c in ERRORS],
                         ids=[c[0] for c in ERRORS])
def test_error_message(text: str, data: dict[str, Any] | None, message: str) -> None:
    with pytest.raises(TemplateError) as info:
        Template(text, source=SRC).render(D if data is None else data)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


def test_error_attributes_locate_the_problem() -> None:
    with pytest.raises(TemplateError) as info:
        Template("a\nb\n  x: {{ modd 1 }}", source="t.yaml")
    err = info.value
    assert (err.source, err.line, err.column) == ("t.yaml", 3, 9)
    assert err.problem == 'unknown function "modd" (did you mean "mod"?)'


def test_parse_errors_do_not_wait_for_render() -> None:
    with pytest.raises(TemplateError, match="unknown function"):
        Template("{{ if false }}{{ modd 1 }}{{ end }}")


def test_runtime_errors_only_on_the_taken_branch() -> None:
    tpl = Template("{{ if .Index }}ok{{ else }}{{ .Missing }}{{ end }}")
    assert tpl.render(D) == "ok"
    with pytest.raises(TemplateError, match=r"undefined field \.Missing"):
        tpl.render({"Index": 0})


# ---------------------------------------------------------------------------------------------
# The Template object


def test_parse_once_render_many() -> None:
    tpl = Template("name: pod-{{ .Index }}-of-{{ .Count }}", source="pod.yaml")
    assert [tpl.render({"Index": i, "Count": 3}) for i in range(3)] == [
        "name: pod-0-of-3", "name: pod-1-of-3", "name: pod-2-of-3"]
    assert tpl.fields == {"Index", "Count"}
    assert not tpl.is_static


def test_template_without_actions_returns_its_text() -> None:
    text = "kind: Pod\nmetadata:\n  generateName: pod-\n"
    tpl = Template(text)
    assert tpl.is_static
    assert tpl.render(D) is text
    assert tpl.fields == frozenset()


def test_fields_lists_top_level_names_in_every_branch() -> None:
    tpl = Template("{{ if .A.X }}{{ $.B }}{{ else }}{{ mod (AddInt .C 1) 2 }}{{ end }}")
    assert tpl.fields == {"A", "B", "C"}


def test_render_function_caches_the_parse() -> None:
    text = "x-{{ .Index }}-cache-probe"
    assert render(text, {"Index": 1}) == "x-1-cache-probe"
    assert render(text, {"Index": 2}) == "x-2-cache-probe"
    from workloads.template.render import _cached

    assert _cached(text, "<template>") is _cached(text, "<template>")


def test_data_is_not_modified() -> None:
    data = {"Index": 3, "Count": 4}
    render("{{ .Index | AddInt 1 }}", data)
    assert data == {"Index": 3, "Count": 4}


def test_extra_function() -> None:
    funcs = {"upper": str.upper, "pair": lambda a, b: f"{a}-{b}"}
    out = render('{{ upper "x" }} {{ .Index | pair "n" }}', D, funcs=funcs)
    assert out == "X n-7"


def test_extra_function_replaces_a_builtin() -> None:
    assert render("{{ mod 7 2 }}", D, funcs={"mod": lambda a, b: "custom"}) == "custom"


def test_extra_function_arity_checked_at_parse() -> None:
    with pytest.raises(TemplateError) as info:
        Template("{{ pair 1 }}", source="s", funcs={"pair": lambda a, b: a})
    assert str(info.value) == "s:1:4: wrong number of arguments for pair: 1 do not fit pair(a, b)"


def test_extra_function_exception_is_wrapped() -> None:
    def boom(x: object) -> None:
        raise RuntimeError(f"bad {x}")

    with pytest.raises(TemplateError) as info:
        render("{{ boom .Index }}", D, source="s", funcs={"boom": boom})
    assert str(info.value) == "s:1:4: error calling boom: bad 7"
    assert isinstance(info.value.__cause__, RuntimeError)


# ---------------------------------------------------------------------------------------------
# Every upstream template


def _upstream_templates(folder: Path) -> list[Any]:
    paths = sorted(folder.glob("**/templates/**/*.yaml"))
    return [pytest.param(p, id=str(p.relative_to(folder))) for p in paths]


# The templateParams of the upstream templates that take more than Index and Count (given by
# the op using them, e.g. createPodGroups with templates/podgroup.yaml), and a value in the
# rendered object for each: (path into the object, expected).
TEMPLATE_PARAMS: dict[str, tuple[dict[str, Any], dict[tuple[Any, ...], Any]]] = {
    "templates/podgroup.yaml": (
        {"minCount": 3, "priority": 5, "disruptionMode": "single"},
        {("spec", "priority"): 5, ("spec", "schedulingPolicy", "gang", "minCount"): 3,
         ("spec", "disruptionMode"): {"single": {}}}),
}


@pytest.mark.parametrize("path", upstream_params(_upstream_templates))
def test_upstream_template_renders_to_yaml(path: Path, upstream_dir: Path) -> None:
    params, expected = TEMPLATE_PARAMS.get(str(path.relative_to(upstream_dir)), ({}, {}))
    text = path.read_text()
    tpl = Template(text, source=str(path))
    out = tpl.render({"Index": 7, "Count": 30, **params})
    obj = yaml.safe_load(out)
    assert isinstance(obj, dict)
    assert "kind" in obj
    assert "{{" not in out
    assert tpl.is_static == ("{{" not in text)
    assert tpl.fields <= {"Index", "Count", *params}
    for keys, want in expected.items():
        value: Any = obj
        for key in keys:
            value = value[key]
        assert value == want


# the same templates rendered with only the parameters they require: an optional one is
# tested with `{{if .x}}`, where a missing key is false as in Go
REQUIRED_ONLY: dict[str, tuple[dict[str, Any], dict[tuple[Any, ...], Any]]] = {
    "templates/podgroup.yaml": ({"minCount": 3}, {("spec", "priority"): 1000}),
}


@pytest.mark.parametrize("path", upstream_params(_upstream_templates))
def test_upstream_template_renders_without_its_optional_params(path: Path,
                                                               upstream_dir: Path) -> None:
    params, expected = REQUIRED_ONLY.get(str(path.relative_to(upstream_dir)), ({}, {}))
    obj = yaml.safe_load(Template(path.read_text(), source=str(path)).render(
        {"Index": 7, "Count": 30, **params}))
    for keys, want in expected.items():
        value: Any = obj
        for key in keys:
            value = value[key]
        assert value == want


def test_a_missing_key_is_false_as_an_if_condition_and_an_error_elsewhere() -> None:
    tpl = Template("{{if .opt}}{{.opt}}{{else}}none{{end}}/{{if .a.b}}b{{end}}", source="t")
    assert tpl.render({}) == "none/"
    assert tpl.render({"opt": 2, "a": {"b": 1}}) == "2/b"
    with pytest.raises(TemplateError, match=r"undefined field .opt \(available: .x\)"):
        Template("{{.opt}}", source="t").render({"x": 1})
    with pytest.raises(TemplateError, match=r"undefined field \.opt"):
        Template("{{if eq .opt 1}}y{{end}}", source="t").render({"x": 1})


# file (relative to the upstream folder), path into the object, expected value
UPSTREAM_VALUES = [
    ("event_handling/templates/poddelete-pod-nodeports.yaml",
     ("spec", "containers", 0, "ports", 0, "hostPort"), 87),
    ("event_handling/templates/poddelete-pod-blocker-topology-ports-resources.yaml",
     ("spec", "containers", 0, "ports", 0, "containerPort"), 87),
    ("event_handling/templates/podupdate-pod-blocker.yaml",
     ("spec", "containers", 0, "resources", "requests", "memory"), "1000Mi"),
    ("event_handling/templates/nodeupdate-pod-tainttoleration.yaml",
     ("spec", "tolerations", 0, "key"), "toleration-0"),
    ("event_handling/templates/podupdate-pod-podtopologyspread.yaml",
     ("spec", "topologySpreadConstraints", 0, "maxSkew"), 30),
    ("event_handling/templates/podupdate-pod-interpodaffinity.yaml",
     ("metadata", "labels", "color"), "green-7"),
    ("misc/templates/pod-with-extended-resource.yaml",
     ("metadata", "name"), "test-extended-resource-7"),
    ("misc/templates/node-with-extended-resource.yaml",
     ("status", "capacity", "foo.com/bar-7"), 1),
]


@pytest.mark.parametrize(("rel", "keys", "want"), UPSTREAM_VALUES,
                         ids=[r.split("/")[-1] for r, _, _ in UPSTREAM_VALUES])
def test_upstream_template_values(rel: str, keys: tuple[Any, ...], want: Any,
                                  upstream_dir: Path) -> None:
    path = require_shared(upstream_dir / rel)
    obj: Any = yaml.safe_load(Template(path.read_text(), source=rel).render(D))
    for key in keys:
        obj = obj[key]
    assert obj == want
