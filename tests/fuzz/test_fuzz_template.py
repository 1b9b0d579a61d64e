"""Fuzz the Go-template subset (issue 16): any text either parses or raises TemplateError;
any parsed template renders with any data or raises TemplateError; never another exception,
never a hang."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.support import fuzz_settings, no_hang, yaml_values
from workloads.template import Template, TemplateError

TOKENS = st.sampled_from([
    "{{", "}}", "{{- ", " -}}", "{{/*", "*/}}", " ", "\n", ".", ".Index", ".Count", ".x",
    ".x.y", "$", "$.Index", "(", ")", "|", "if", "else", "else if", "end", "range", "with",
    "else with", "$x", "$y", ":=", "=", ",", "break", "Int", "JSON",
    "mod", "div", "AddInt", "SubtractInt", "MultiplyInt", "DivideInt", "Mod", "AddFloat",
    "DivideFloat", "and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "printf", "len",
    "0", "1", "-7", "2.5", "1e308", "-1e308", "9223372036854775807", "99999999999999999999",
    "0x1F", '"s"', '"\\x41"', '"\\u00e9"', "`raw`", "'c'", "'\\n'", "nil", "true", "false",
    "cpu: ", "x", "\t", "{", "}", '"', "'"])

DATA = st.fixed_dictionaries(
    {"Index": st.integers(-(2**64), 2**64), "Count": st.integers(-(2**64), 2**64)},
    optional={"x": yaml_values(max_leaves=5), "y": yaml_values(max_leaves=3)})


def _check(text: str, data: dict) -> None:
    with no_hang():
        try:
            template = Template(text, source="fuzz.yaml")
        except TemplateError as exc:
            assert str(exc).strip()
            return
        try:
            out = template.render(data)
        except TemplateError as exc:
            assert str(exc).strip()
            return
        assert isinstance(out, str)


@fuzz_settings()
@given(st.lists(TOKENS, max_size=25).map("".join), DATA)
def test_token_soup(text: str, data: dict) -> None:
    _check(text, data)


@fuzz_settings()
@given(st.text(max_size=80), DATA)
def test_any_text(text: str, data: dict) -> None:
    _check(text, data)


@fuzz_settings()
@given(st.lists(st.lists(TOKENS.filter(lambda t: "{" not in t and "}" not in t),
                         max_size=6).map("".join), max_size=4), DATA)
def test_actions(actions: list[str], data: dict) -> None:
    _check("cpu: " + "".join("{{ " + a + " }}" for a in actions) + "m", data)
