"""bench.coverage.statements: coverage.py's statements, the subset outside error-raising
branches, and function headers / bodies."""

from __future__ import annotations

import textwrap

import pytest

from bench.coverage.statements import StatementsError, parse_statements

SOURCE = textwrap.dedent('''\
    """Module docstring."""
    import os

    LIMIT = (1,
             2)


    @staticmethod
    def check(a,
              b):
        """Docstring."""
        if a:
            os.getcwd()
            raise ValueError(
                "bad a")
        elif b:
            for i in range(3):
                print(i)
            raise KeyError(b)
        else:
            x = 1
        with open(os.devnull) as fh:
            fh.read()
            raise RuntimeError
        return x


    class Box:
        size = 1

        def get(self):
            try:
                size = self.size
            except AttributeError:
                print("no size")
                raise
            while True:
                if size:
                    break
                print("loop")
            return 0

        def todo(self):
            raise NotImplementedError

        def inner(self):
            def helper():
                return 1
            return helper()
    ''')


def line_of(text: str) -> int:
    """The line holding ``text`` (a line that is exactly ``text`` when stripped wins)."""
    lines = list(enumerate(SOURCE.splitlines(), 1))
    exact = [i for i, line in lines if line.strip() == text.strip()]
    found = exact or [i for i, line in lines if text in line]
    assert len(found) == 1, text
    return found[0]


def test_statements_are_coverage_pys_first_lines() -> None:
    s = parse_statements(SOURCE)
    # a multi-line statement counts once, at its first line; continuation lines map to it
    assert line_of("LIMIT = (1,") in s.statements
    assert line_of("         2)") not in s.statements
    assert s.statement_of(line_of("         2)")) == line_of("LIMIT = (1,")
    assert s.statement_of(line_of('"bad a")')) == line_of("raise ValueError(")
    # docstrings and blank lines are no statements
    assert line_of('"""Module docstring."""') not in s.statements
    assert line_of('"""Docstring."""') not in s.statements
    assert s.statement_of(3) is None


def test_outside_error_branches_drops_raise_blocks_and_raises_only() -> None:
    s = parse_statements(SOURCE)
    error = s.statements - s.outside_error
    expected_error = {
        line_of("os.getcwd()"), line_of("raise ValueError("),          # if-body ending in raise
        line_of("for i in range(3):"), line_of("print(i)"),             # elif body, nested too
        line_of("raise KeyError(b)"),
        line_of("fh.read()"), line_of("raise RuntimeError"),            # with body
        line_of('print("no size")'), line_of("raise"),       # except handler body
        line_of("raise NotImplementedError"),                            # a raise by itself
    }
    assert error == expected_error
    # headers stay: they run on the normal path
    for kept in ("if a:", "elif b:", "with open(os.devnull)", "except AttributeError:",
                 "x = 1", "return x", "while True:", "break", 'print("loop")',
                 "def todo(self):"):
        assert line_of(kept) in s.outside_error, kept


def test_functions_have_their_header_lines_and_body_span() -> None:
    s = parse_statements(SOURCE)
    by_name = {f.name: f for f in s.functions}
    assert set(by_name) == {"check", "Box.get", "Box.todo", "Box.inner",
                            "Box.inner.<locals>.helper"}
    check = by_name["check"]
    assert check.header == {line_of("@staticmethod"), line_of("def check(a,")}
    assert check.contains(line_of("return x")) and not check.contains(line_of("class Box:"))
    assert s.function_at(line_of("return 1")) == by_name["Box.inner.<locals>.helper"]
    assert s.function_at(line_of("size = 1")) is None


def test_around_a_deletion_point_takes_the_statements_before_and_after() -> None:
    s = parse_statements(SOURCE)
    # deleted after the blank line 3: the import before, the assignment after
    assert s.around(3) == {line_of("import os"), line_of("LIMIT = (1,")}
    # inside a multi-line statement: that statement (its first line) on both sides
    assert s.around(line_of("LIMIT = (1,")) == {line_of("LIMIT = (1,")}
    # at the file's start: only the statement after
    assert s.around(0) == {line_of("import os")}


def test_invalid_python_is_an_error_naming_the_file() -> None:
    with pytest.raises(StatementsError, match=r"x\.py: not valid Python"):
        parse_statements("def f(:\n", "x.py")


def test_parsing_is_serialised_across_threads(monkeypatch):
    """ast.parse in two threads at once can fail on CPython 3.11 (cpython#106905, "AST
    constructor recursion depth mismatch"); maps computed by several processes attribute
    lines in threads, so parse_statements parses under one lock."""
    import ast as ast_module

    from bench.coverage import statements

    held = []
    real_parse = ast_module.parse

    def checking_parse(*args, **kwargs):
        held.append(statements._PARSE_LOCK.locked())
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(statements.ast, "parse", checking_parse)
    statements.parse_statements("x = 1\n")
    assert held and all(held)
