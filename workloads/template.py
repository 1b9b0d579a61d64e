"""Go ``text/template`` for scheduler_perf object templates: the subset upstream uses.

Upstream renders every node, pod and object template file with Go's ``text/template`` and the
data map ``{"Index": i, "Count": n}`` (the newest harness merges ``templateParams`` into it). Two
generations of helper functions exist upstream:

* older: ``mod`` and ``div`` with Go ``int`` parameters (``8{{ mod .Index 12 }}``,
  ``{{ div 30000 .Count }}Mi`` in event_handling/templates);
* newer: ``AddInt SubtractInt MultiplyInt DivideInt Mod`` and ``AddFloat SubtractFloat
  MultiplyFloat DivideFloat``. Each takes numbers (or numeric strings), converts them to float64,
  and the ``*Int`` ones truncate the float result to int. ``Add*`` and ``Multiply*`` take any
  number of arguments.

A :class:`Template` is tokenised and parsed once into a flat list whose items are literal strings
or compiled closures, so rendering the same pod template thousands of times costs one list
comprehension and a ``str.join``; a template without actions renders by returning its text.

What is implemented: actions ``{{ }}`` with the trim markers ``{{- `` and `` -}}``; comments
``{{/* */}}``; pipelines of commands joined by ``|`` (the value on the left becomes the last
argument of the function on the right); operands ``.``, ``.Field``, ``.A.B``, ``$`` and
``$.Field``; parenthesised pipelines (fields may follow them: ``(x).A``); int, float, string
(with Go's escapes), raw string, character, ``true``/``false``/``nil`` literals; ``if`` /
``else if`` / ``else`` / ``end``; and these builtins besides the two function maps: ``and or
not eq ne lt le gt ge``. Go evaluates ``and``/``or`` lazily; so does this module.

Not implemented, each reported as a :class:`TemplateError`: ``range``, ``with``, ``define``,
``template``, ``block``, ``break``, ``continue``, variables other than ``$``, and the other Go
builtins (``printf``, ``len``, ``index``, ...). No upstream template uses any of them.

Deliberate differences from Go:

* a missing map key is an error naming the fields that exist (Go's default ``missingkey``
  option would print ``<no value>`` and let the YAML decoder fail later, far from the cause),
  except as the whole condition of an ``if`` / ``else if``, where Go's "no value" is false
  (upstream's ``podgroup.yaml`` writes ``{{if .priority}}`` for an optional parameter);
* a literal of the wrong type for ``mod``/``div`` is reported when the template is parsed,
  not when it runs;
* columns in messages are 1-based and count characters (Go: 0-based bytes, and only the line
  for parse errors).

Values print as Go's ``fmt`` ``%v`` prints them: ints as decimal, float64 in Go's shortest form
(``2.5``, ``3``, ``1e+06``, ``1e-05``), ``true``/``false``, strings raw, ``nil`` as
``<no value>``, lists as ``[a b]`` and maps as ``map[k:v]`` with sorted keys.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

__all__ = ["Template", "TemplateError", "render"]

_SPACE = " \t\r\n"
_KEYWORDS = frozenset(
    {"if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"}
)
_UNSUPPORTED_KEYWORDS = _KEYWORDS - {"if", "else", "end"}
_OCTAL_OR_DECIMAL = re.compile(r"0[0-7_]*|[0-9_]+")
_INT64_MIN, _INT64_LIMIT = -(2**63), 2**63


class TemplateError(ValueError):
    """A template cannot be parsed or rendered.

    The message reads ``source:line:column: problem``, for example
    ``templates/pod.yaml:7:12: unknown function "modd"``. The parts are also attributes.
    """

    def __init__(self, problem: str, *, source: str = "<template>", line: int = 0,
                 column: int = 0) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        where = f"{source}:{line}:{column}" if line else source
        super().__init__(f"{where}: {problem}")


class _Where:
    """Turns an offset in the template text into a located TemplateError (only on error)."""

    __slots__ = ("source", "text")

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text

    def error(self, off: int, problem: str) -> TemplateError:
        line = self.text.count("\n", 0, off) + 1
        column = off - self.text.rfind("\n", 0, off)
        return TemplateError(problem, source=self.source, line=line, column=column)


class _CallError(Exception):
    """Raised by a builtin; reported as ``error calling NAME: reason``."""


# ---------------------------------------------------------------------------------------------
# Printing and truth, after Go's fmt %v and text/template's notion of "empty".


def _go_float(f: float) -> str:
    """float64 as Go's %v prints it (strconv 'g' with the shortest precision).

    The shortest digits that read back as the same float; exponent form when the decimal
    exponent is below -4 or at least 6 (so ``100000`` but ``1e+06``, ``0.0001`` but ``1e-05``),
    with a sign and at least two exponent digits.
    """
    if f != f:
        return "NaN"
    if f in (math.inf, -math.inf):
        return "+Inf" if f > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return sign + "0"
    dec = Decimal(repr(abs(f))).normalize()  # repr is the shortest round-trip form, as in Go
    _, digit_tuple, exponent = dec.as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)  # decimal point position relative to the digits
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _go_format(v: Any, nested: bool = False) -> str:
    if v is None:
        return "<nil>" if nested else "<no value>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return _go_float(float(v))
    if isinstance(v, Mapping):
        keys = sorted(v, key=lambda k: (not isinstance(k, str), str(k)))
        inner = " ".join(f"{_go_format(k, True)}:{_go_format(v[k], True)}" for k in keys)
        return f"map[{inner}]"
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(_go_format(x, True) for x in v) + "]"
    return str(v)


def _go_str(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    if t is int:
        return str(v)
    return _go_format(v)


def _go_type(v: Any) -> str:
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, Mapping):
        return "map"
    if isinstance(v, (list, tuple)):
        return "slice"
    return type(v).__name__


def _describe(v: Any) -> str:
    """``float64 2.5``, ``string "x"``: a value with its Go type, for messages."""
    text = f'"{v}"' if isinstance(v, str) else _go_format(v)
    return f"{_go_type(v)} {text}"


def _truth(v: Any) -> bool:
    """Go template truth: false, 0, nil and empty strings/collections are false."""
    if v is None:
        return False
    if isinstance(v, (bool, numbers.Number, str, Mapping, list, tuple)):
        return bool(v)
    return True


# ---------------------------------------------------------------------------------------------
# Builtin functions.


def _go_div(a: int, b: int) -> int:
    """Go integer division: truncates toward zero."""
    if b == 0:
        raise _CallError("integer divide by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _go_mod(a: int, b: int) -> int:
    """Go %: the result has the sign of the dividend."""
    if b == 0:
        raise _CallError("integer divide by zero")
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _parse_go_float(s: str) -> float | None:
    """strconv.ParseFloat(s, 64), closely enough: no spaces, underscores only with a prefix."""
    if not s or any(c in _SPACE for c in s):
        return None
    body = s.lstrip("+-")
    if body[:2].lower() == "0x":
        try:
            f = float.fromhex(s.replace("_", ""))
        except ValueError:
            return None
        return f
    if "_" in s:
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _to_float(v: Any) -> float:
    """Upstream's toFloat64: numbers and numeric strings; anything else cannot be cast."""
    t = type(v)
    if t is float:
        return v
    if t is int:
        return float(v)
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        f = _parse_go_float(v)
        if f is not None:
            return f
    raise _CallError(f"cannot cast {_describe(v)} to float64")


def _float_to_int(f: float) -> int:
    """Go's int(f): truncates toward zero. NaN and infinities have no int value."""
    if f != f or f in (math.inf, -math.inf):
        raise _CallError(f"cannot convert {_go_float(f)} to int")
    return int(f)


def _add_float(*nums: Any) -> float:
    total = 0.0
    for x in nums:  # sequential like Go, not math.fsum
        total += _to_float(x)
    return total


def _multiply_float(*nums: Any) -> float:
    product = 1.0
    for x in nums:
        product *= _to_float(x)
    return product


def _subtract_float(a: Any, b: Any) -> float:
    return _to_float(a) - _to_float(b)


def _divide_float(a: Any, b: Any) -> float:
    x, y = _to_float(a), _to_float(b)
    if y == 0:
        raise _CallError("division by zero")
    return x / y


def _mod_any(a: Any, b: Any) -> int:
    return _go_mod(_float_to_int(_to_float(a)), _float_to_int(_to_float(b)))


def _kind(v: Any) -> str | None:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, numbers.Integral):
        return "int"
    if isinstance(v, numbers.Real):
        return "float"
    if isinstance(v, str):
        return "string"
    return None


def _eq(a: Any, *others: Any) -> bool:
    ka = _kind(a)
    for b in others:
        kb = _kind(b)
        if ka is None or kb is None:
            if a is None and b is None:
                return True
            raise _CallError(f"cannot compare {_go_type(a)} with {_go_type(b)}")
        if ka != kb:
            raise _CallError(f"incompatible types for comparison: {_go_type(a)} and {_go_type(b)}")
        if a == b:
            return True
    return False


def _ne(a: Any, b: Any) -> bool:
    return not _eq(a, b)


def _lt(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka not in ("int", "float", "string") or kb not in ("int", "float", "string"):
        raise _CallError(f"cannot order {_go_type(a)} and {_go_type(b)}")
    if ka != kb:
        raise _CallError(f"incompatible types for comparison: {_go_type(a)} and {_go_type(b)}")
    return bool(a < b)


def _le(a: Any, b: Any) -> bool:
    return _lt(a, b) or _eq(a, b)


def _gt(a: Any, b: Any) -> bool:
    return not _le(a, b)


def _ge(a: Any, b: Any) -> bool:
    return not _lt(a, b)


def _not(a: Any) -> bool:
    return not _truth(a)


@dataclass(frozen=True, slots=True)
class _Func:
    impl: Callable[..., Any]
    min_args: int
    max_args: int | None  # None: variadic
    int_args: bool = False  # Go int parameters: only ints are accepted
    lazy: str = ""  # "and" / "or": arguments evaluated only as far as needed


_BUILTINS: dict[str, _Func] = {
    # scheduler_perf, older function map
    "mod": _Func(_go_mod, 2, 2, int_args=True),
    "div": _Func(_go_div, 2, 2, int_args=True),
    # scheduler_perf, newer function map (numbers go through float64)
    "AddInt": _Func(lambda *a: _float_to_int(_add_float(*a)), 0, None),
    "SubtractInt": _Func(lambda a, b: _float_to_int(_subtract_float(a, b)), 2, 2),
    "MultiplyInt": _Func(lambda *a: _float_to_int(_multiply_float(*a)), 0, None),
    "DivideInt": _Func(lambda a, b: _float_to_int(_divide_float(a, b)), 2, 2),
    "Mod": _Func(_mod_any, 2, 2),
    "AddFloat": _Func(_add_float, 0, None),
    "SubtractFloat": _Func(_subtract_float, 2, 2),
    "MultiplyFloat": _Func(_multiply_float, 0, None),
    "DivideFloat": _Func(_divide_float, 2, 2),
    # Go text/template builtins
    "and": _Func(lambda *a: a[-1], 1, None, lazy="and"),
    "or": _Func(lambda *a: a[-1], 1, None, lazy="or"),
    "not": _Func(_not, 1, 1),
    "eq": _Func(_eq, 2, None),
    "ne": _Func(_ne, 2, 2),
    "lt": _Func(_lt, 2, 2),
    "le": _Func(_le, 2, 2),
    "gt": _Func(_gt, 2, 2),
    "ge": _Func(_ge, 2, 2),
}


def _user_func(fn: Callable[..., Any]) -> _Func:
    return _Func(fn, 0, None)


# ---------------------------------------------------------------------------------------------
# Lexer: text and actions.


class _Tok:
    __slots__ = ("end", "kind", "off", "spaced", "val")

    def __init__(self, kind: str, val: Any, off: int, end: int, spaced: bool) -> None:
        self.kind = kind  # field dot var ident kw const ( ) | decl ,
        self.val = val
        self.off = off
        self.end = end
        self.spaced = spaced  # white space (or the action start) precedes it


class _Action:
    __slots__ = ("off", "toks")

    def __init__(self, off: int, toks: list[_Tok]) -> None:
        self.off = off
        self.toks = toks


def _is_word_char(c: str) -> bool:
    return c == "_" or c.isalnum()


def _scan(text: str, where: _Where) -> list[str | _Action]:
    """Split the template into text chunks and actions; apply trim markers; drop comments."""
    items: list[str | _Action] = []
    pos, n, trim_next = 0, len(text), False
    while True:
        start = text.find("{{", pos)
        chunk = text[pos:] if start < 0 else text[pos:start]
        if trim_next:
            chunk = chunk.lstrip(_SPACE)
        if start < 0:
            if chunk:
                items.append(chunk)
            return items
        i = start + 2
        if text.startswith("-", i) and i + 1 < n and text[i + 1] in _SPACE:
            chunk = chunk.rstrip(_SPACE)
            i += 2
        if chunk:
            items.append(chunk)
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                raise where.error(start, "unclosed comment: no closing */")
            j = close + 2
            if text.startswith("}}", j):
                pos, trim_next = j + 2, False
            elif j < n and text[j] in _SPACE and text.startswith("-}}", j + 1):
                pos, trim_next = j + 4, True
            else:
                raise where.error(close, 'comment ends before the closing "}}"')
            continue
        toks, pos, trim_next = _lex_action(text, i, start, where)
        items.append(_Action(start, toks))


def _lex_action(text: str, i: int, start: int, where: _Where) -> tuple[list[_Tok], int, bool]:
    toks: list[_Tok] = []
    n = len(text)
    spaced = True
    while True:
        if i >= n:
            raise where.error(start, 'unclosed action: no closing "}}"')
        c = text[i]
        if c in _SPACE:
            if text.startswith("-}}", i + 1):
                return toks, i + 4, True
            i += 1
            spaced = True
            continue
        if text.startswith("}}", i):
            return toks, i + 2, False
        if text.startswith("{{", i):
            raise where.error(start, 'unclosed action: no closing "}}" before the next "{{"')
        off = i
        word = False  # a field, variable, identifier: must be followed by a terminator
        if c in "()|,":
            kind, val, i = c, c, i + 1
        elif c == ":" and text.startswith(":=", i):
            kind, val, i = "decl", ":=", i + 2
        elif c == "=":
            kind, val, i = "decl", "=", i + 1
        elif c == '"':
            i = _scan_quoted(text, i, '"', where)
            kind, val = "const", (_unquote(text[off + 1:i - 1], '"', where, off), None)
        elif c == "`":
            close = text.find("`", i + 1)
            if close < 0:
                raise where.error(off, "unterminated raw string")
            i = close + 1
            kind, val = "const", (text[off + 1:close].replace("\r", ""), None)
        elif c == "'":
            i = _scan_quoted(text, i, "'", where)
            ch = _unquote(text[off + 1:i - 1], "'", where, off)
            if len(ch) != 1:
                raise where.error(off, f"malformed character constant {text[off:i]}")
            kind, val = "const", (ord(ch), ord(ch))
        elif c == "$":
            i += 1
            while i < n and _is_word_char(text[i]):
                i += 1
            kind, val, word = "var", text[off:i], True
        elif c == "." and i + 1 < n and "0" <= text[i + 1] <= "9":
            i = _scan_number(text, i, where)
            kind, val = "const", _number(text[off:i], where, off)
        elif c == ".":
            i += 1
            if i < n and _is_word_char(text[i]):
                while i < n and _is_word_char(text[i]):
                    i += 1
                kind, val = "field", text[off + 1:i]
            else:
                kind, val = "dot", "."
            word = True
        elif c in "+-" or "0" <= c <= "9":
            i = _scan_number(text, i, where)
            kind, val = "const", _number(text[off:i], where, off)
        elif _is_word_char(c):
            while i < n and _is_word_char(text[i]):
                i += 1
            val, word = text[off:i], True
            if val in ("true", "false"):
                kind, val = "const", (val == "true", None)
            elif val == "nil":
                kind, val = "const", (None, None)
            else:
                kind = "kw" if val in _KEYWORDS else "ident"
        elif text.startswith("/*", i):
            raise where.error(off, 'a comment must follow "{{" or "{{- " directly: {{/* ... */}}')
        else:
            raise where.error(off, f"unexpected {c!r} in action")
        if word and i < n and text[i] not in _SPACE and text[i] not in ".|()=:,}":
            hint = ""
            if text.startswith("-}}", i):
                hint = ' (a trim marker needs white space before it: " -}}")'
            raise where.error(i, f"unexpected {text[i]!r} after {text[off:i]}{hint}")
        toks.append(_Tok(kind, val, off, i, spaced))
        spaced = False


def _scan_quoted(text: str, i: int, quote: str, where: _Where) -> int:
    """Offset just past the closing quote of the literal starting at i."""
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "\n":
            break
        if c == quote:
            return j + 1
        j += 1
    what = "quoted string" if quote == '"' else "character constant"
    raise where.error(i, f"unterminated {what}")


_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}


def _unquote(body: str, quote: str, where: _Where, off: int) -> str:
    """Go escape sequences: \\n \\t ... \\xhh \\ooo \\uhhhh \\Uhhhhhhhh and the quote itself."""
    if "\\" not in body:
        return body
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1] if i + 1 < n else ""
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
        elif e == quote:
            out += e.encode()
            i += 2
        elif e in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise where.error(off, f"invalid escape \\{e}{digits} in {quote}-quoted literal")
            value = int(digits, 16)
            if e == "x":
                out.append(value)
            elif value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                raise where.error(off, f"escape \\{e}{digits} is not a valid code point")
            else:
                out += chr(value).encode()
            i += 2 + width
        elif e and e in "01234567":
            digits = body[i + 1:i + 4]
            octal = len(digits) == 3 and all(d in "01234567" for d in digits)
            if not octal or int(digits, 8) > 255:
                raise where.error(off, f"invalid octal escape \\{digits}")
            out.append(int(digits, 8))
            i += 4
        else:
            raise where.error(off, f"unknown escape sequence \\{e}")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise where.error(off, "literal is not valid UTF-8 after its escapes") from None


def _scan_number(text: str, i: int, where: _Where) -> int:
    """Offset just past a Go number literal starting at i (sign, base prefix, '.', exponent)."""
    start, n = i, len(text)
    if text[i] in "+-":
        i += 1
    digits, exponent = "0123456789_", "eE"
    prefix = text[i:i + 2].lower()
    if prefix == "0x":
        digits, exponent, i = "0123456789abcdefABCDEF_", "pP", i + 2
    elif prefix in ("0o", "0b"):
        digits, exponent, i = "0123456789_", "", i + 2
    while i < n and text[i] in digits:
        i += 1
    if i < n and text[i] == ".":
        i += 1
        while i < n and text[i] in digits:
            i += 1
    if exponent and i < n and text[i] in exponent:
        i += 1
        if i < n and text[i] in "+-":
            i += 1
        while i < n and text[i] in "0123456789_":
            i += 1
    if i < n and text[i] == "i":
        i += 1
    if i < n and (_is_word_char(text[i]) or text[i] == "."):
        while i < n and (_is_word_char(text[i]) or text[i] == "."):
            i += 1
        raise where.error(start, f"bad number syntax: {text[start:i]}")
    return i


def _number(text: str, where: _Where, off: int) -> tuple[int | float, int | None]:
    """(value, value as int or None). Value is a float when the text has float syntax, as in
    Go's handling of untyped constants; an integral float still fits an int parameter."""
    neg = text.startswith("-")
    body = text.lstrip("+-")
    low = body.lower()
    if not body.strip("+-"):
        raise where.error(off, f"bad number syntax: {text}")
    if low.endswith("i") and not low.startswith("0x"):
        raise where.error(off, f"complex number {text} is not supported")
    is_hex = low.startswith("0x")
    floaty = ("." in low or "p" in low) if is_hex else ("." in low or "e" in low)
    if low.startswith(("0b", "0o")):
        floaty = False
    if not floaty:
        try:
            iv = int(body, 0)
        except ValueError:
            if not _OCTAL_OR_DECIMAL.fullmatch(body) or body.startswith("_"):
                raise where.error(off, f"bad number syntax: {text}") from None
            iv = int(body, 8 if re.fullmatch(r"0[0-7_]*", body) else 10)
        iv = -iv if neg else iv
        if not _INT64_MIN <= iv < _INT64_LIMIT:
            raise where.error(off, f"number {text} overflows int64")
        return iv, iv
    try:
        fv = float.fromhex(body) if is_hex else float(body)
    except ValueError:
        raise where.error(off, f"bad number syntax: {text}") from None
    fv = -fv if neg else fv
    as_int = int(fv) if fv.is_integer() and _INT64_MIN <= fv < _INT64_LIMIT else None
    return fv, as_int


# ---------------------------------------------------------------------------------------------
# Parser + compiler: items -> list of literal strings and closures taking the data.

_Getter = Callable[[Any], Any]


def _identity(data: Any) -> Any:
    return data


class _Op:
    """One parsed operand of a command."""

    __slots__ = ("const", "fn", "kind", "name", "off", "text")

    def __init__(self, kind: str, off: int, text: str, *, fn: _Getter | None = None,
                 name: str = "", const: tuple[Any, int | None] | None = None) -> None:
        self.kind = kind  # "ident" (function name), "const" (literal), "value" (anything else)
        self.off = off
        self.text = text
        self.fn = fn
        self.name = name
        self.const = const


class _Toks:
    __slots__ = ("i", "toks")

    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok


def _merge(parts: list[Any]) -> list[Any]:
    """Adjacent literal strings merged into one (comments and trims leave them apart)."""
    merged: list[Any] = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif not (isinstance(p, str) and not p):
            merged.append(p)
    return merged


def _join(parts: list[Any]) -> str | Callable[[Any], str]:
    """A static string, or one closure rendering the parts (literal strings and closures).

    The closure is straight-line code, ``"".join((p0, p1(data), p2))``, generated from the
    part indexes only (like dataclasses' generated methods): on Python 3.11 a comprehension
    over the parts costs about as much again as the whole render of a one-action template.
    """
    merged = _merge(parts)
    if not merged:
        return ""
    if len(merged) == 1:
        return merged[0]
    names = {f"_p{i}": p for i, p in enumerate(merged)}
    items = ", ".join(
        name if isinstance(p, str) else f"{name}(data)" for name, p in names.items()
    )
    namespace: dict[str, Any] = {}
    exec(f"def _render(data):\n    return ''.join(({items},))\n", names, namespace)
    return namespace["_render"]  # type: ignore[no-any-return]


class _Compiler:
    def __init__(self, text: str, where: _Where, funcs: Mapping[str, Callable[..., Any]] | None):
        self.where = where
        self.text = text
        self.funcs: dict[str, _Func] = dict(_BUILTINS)
        for name, fn in (funcs or {}).items():
            self.funcs[name] = _user_func(fn)
        self.user_funcs = dict(funcs or {})
        self.fields: set[str] = set()
        self.items = _scan(text, where)
        self.pos = 0

    def err(self, off: int, problem: str) -> TemplateError:
        return self.where.error(off, problem)

    # -- structure ------------------------------------------------------------------------

    def compile(self) -> list[Any]:
        parts, stop = self._list()
        if stop is not None:
            raise self.err(stop.off, f"unexpected {{{{{stop.toks[0].val}}}}}")
        return parts

    def _list(self) -> tuple[list[Any], _Action | None]:
        """Parts up to (not including) an {{else}} or {{end}} action, which is returned."""
        parts: list[Any] = []
        while self.pos < len(self.items):
            item = self.items[self.pos]
            self.pos += 1
            if isinstance(item, str):
                parts.append(item)
                continue
            toks = item.toks
            if not toks:
                raise self.err(item.off, "empty action: missing value")
            head = toks[0]
            if head.kind == "kw":
                if head.val in ("else", "end"):
                    return parts, item
                if head.val == "if":
                    parts.append(self._if(item))
                    continue
                raise self.err(
                    head.off,
                    f"{{{{{head.val}}}}} is not supported by this renderer "
                    "(it implements if/else/end; upstream templates use no other)",
                )
            ts = _Toks(toks)
            fn = self._pipeline(ts, item.off, "action")
            self._expect_end_of_action(ts, "the pipeline")
            parts.append(self._printer(fn, ts))
        return parts, None

    def _if(self, item: _Action) -> Any:
        branches: list[tuple[_Getter, Any]] = []
        else_body: Any = ""
        cond_action = item
        cond_toks = _Toks(item.toks)
        cond_toks.next()  # "if"
        while True:
            cond = self._pipeline(cond_toks, cond_action.off, "if")
            # Go: a missing map key is "no value", which `if` takes as false
            cond = getattr(cond, "if_missing_false", cond)
            self._expect_end_of_action(cond_toks, "the if condition")
            body, stop = self._list()
            if stop is None:
                raise self.err(item.off, "{{if}} has no matching {{end}}")
            branches.append((cond, _join(body)))
            st = _Toks(stop.toks)
            kw = st.next().val
            if kw == "end":
                self._expect_end_of_action(st, "end")
                break
            nxt = st.peek()
            if nxt is not None and nxt.kind == "kw" and nxt.val == "if":  # {{else if ...}}
                st.next()
                cond_action, cond_toks = stop, st
                continue
            self._expect_end_of_action(st, "else")
            body, stop2 = self._list()
            if stop2 is None:
                raise self.err(item.off, "{{if}} has no matching {{end}}")
            if stop2.toks[0].val != "end":
                raise self.err(stop2.off, "{{else}} after {{else}} in the same {{if}}")
            self._expect_end_of_action(_Toks(stop2.toks[1:]), "end")
            else_body = _join(body)
            break
        return self._if_closure(branches, else_body)

    @staticmethod
    def _if_closure(branches: list[tuple[_Getter, Any]], else_body: Any) -> Any:
        def run_body(body: Any, data: Any) -> str:
            return body if body.__class__ is str else body(data)

        if len(branches) == 1:
            (cond, body), = branches

            def run_if(data: Any) -> str:
                if _truth(cond(data)):
                    return run_body(body, data)
                return run_body(else_body, data)

            return run_if

        def run_chain(data: Any) -> str:
            for cond, body in branches:
                if _truth(cond(data)):
                    return run_body(body, data)
            return run_body(else_body, data)

        return run_chain

    def _expect_end_of_action(self, ts: _Toks, kw: str) -> None:
        extra = ts.peek()
        if extra is not None:
            raise self.err(extra.off, f"unexpected {self._tok_text(extra)!r} after {kw}")

    def _tok_text(self, tok: _Tok) -> str:
        return self.text[tok.off:tok.end]

    def _printer(self, fn: _Getter, ts: _Toks) -> Callable[[Any], str]:
        """The closure printing an action's value; `{{ .Name }}` gets a fused fast path."""
        toks = ts.toks
        if len(toks) == 1 and toks[0].kind == "field":
            key = toks[0].val
            slow = fn

            def print_field(data: Any) -> str:
                try:
                    v = data[key]
                except Exception:
                    v = slow(data)  # raises the located error
                t = v.__class__
                if t is int:
                    return str(v)
                if t is str:
                    return v
                return _go_format(v)

            return print_field

        def print_value(data: Any) -> str:
            return _go_str(fn(data))

        return print_value

    # -- pipelines ------------------------------------------------------------------------

    def _pipeline(self, ts: _Toks, action_off: int, context: str) -> _Getter:
        first = ts.peek()
        if first is None or first.kind == ")":
            off = first.off if first is not None else action_off
            raise self.err(off, f"missing value for {context}")
        if first.kind == "var" and len(ts.toks) > ts.i + 1 and ts.toks[ts.i + 1].kind == "decl":
            raise self.err(first.off, "variables are not supported (only $ is)")
        fn: _Getter | None = None
        while True:
            ops = self._command(ts)
            if not ops:
                tok = ts.peek()
                off = tok.off if tok is not None else action_off
                raise self.err(off, f"missing command after | in {context}")
            fn = self._compile_command(ops, fn)
            tok = ts.peek()
            if tok is None or tok.kind == ")":
                return fn
            if tok.kind != "|":  # pragma: no cover - _command stops only at | ) or the end
                raise self.err(tok.off, f"unexpected {self._tok_text(tok)!r}")
            ts.next()

    def _command(self, ts: _Toks) -> list[_Op]:
        ops: list[_Op] = []
        while True:
            tok = ts.peek()
            if tok is None or tok.kind in ("|", ")"):
                return ops
            if ops and not tok.spaced and tok.kind not in ("(", ",", "decl"):
                raise self.err(tok.off, f"missing space before {self._tok_text(tok)!r}")
            ops.append(self._operand(ts))

    def _operand(self, ts: _Toks) -> _Op:
        tok = ts.next()
        kind = tok.kind
        if kind in ("field", "dot", "var"):
            if kind == "var" and tok.val != "$":
                raise self.err(tok.off, f'undefined variable "{tok.val}" (only $ is supported)')
            names = [tok.val] if kind == "field" else []
            end = tok.end
            while (nxt := ts.peek()) is not None and nxt.kind == "field" and not nxt.spaced:
                names.append(ts.next().val)
                end = nxt.end
            prefix = "$" if kind == "var" else ""
            if names:
                self.fields.add(names[0])
            return _Op("value", tok.off, self.text[tok.off:end],
                       fn=self._getter(_identity, prefix, tuple(names), tok.off))
        if kind == "const":
            value, _ = tok.val
            nxt = ts.peek()
            if nxt is not None and nxt.kind == "field" and not nxt.spaced:
                raise self.err(nxt.off, f"unexpected {nxt.val!r} after a literal")
            return _Op("const", tok.off, self._tok_text(tok), fn=lambda _data: value,
                       const=tok.val)
        if kind == "ident":
            if tok.val not in self.funcs:
                raise self.err(tok.off, self._unknown_function(tok.val))
            return _Op("ident", tok.off, tok.val, name=tok.val)
        if kind == "(":
            inner = self._pipeline(ts, tok.off, "parenthesized pipeline")
            close = ts.peek()
            if close is None or close.kind != ")":
                raise self.err(tok.off, 'unclosed left paren: missing ")"')
            ts.next()
            names = []
            end = close.end
            while (nxt := ts.peek()) is not None and nxt.kind == "field" and not nxt.spaced:
                names.append(ts.next().val)
                end = nxt.end
            text = self.text[tok.off:end]
            fn = self._getter(inner, text[: close.end - tok.off], tuple(names), tok.off)
            return _Op("value", tok.off, text, fn=fn)
        if kind == "decl":
            raise self.err(tok.off, "variables are not supported (only $ is)")
        if kind == ",":
            raise self.err(tok.off, "unexpected ',' (range is not supported)")
        if kind == "kw":
            raise self.err(tok.off, f"unexpected {tok.val!r} in command")
        raise self.err(tok.off, f"unexpected {self._tok_text(tok)!r} in command")

    def _unknown_function(self, name: str) -> str:
        names = sorted(self.funcs)
        same = [n for n in names if n.lower() == name.lower()]
        close = same or difflib.get_close_matches(name, names, n=1, cutoff=0.75)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        return f'unknown function "{name}"{hint}'

    def _getter(self, base: _Getter, prefix: str, names: tuple[str, ...], off: int) -> _Getter:
        """Field chain `names` looked up on base(data); prefix spells base in messages."""
        if not names:
            return base
        where = self.where

        def fail(value: Any, depth: int) -> TemplateError:
            spelled_parent = prefix + "".join(f".{k}" for k in names[:depth])
            spelled = spelled_parent + f".{names[depth]}"
            if isinstance(value, Mapping):
                keys = sorted(k for k in value if isinstance(k, str))
                available = ", ".join(f"{spelled_parent}.{k}" for k in keys) or "none"
                return where.error(off, f"undefined field {spelled} (available: {available})")
            shown = spelled_parent or "."
            return where.error(
                off, f"can't evaluate field {spelled}: {shown} is {_describe(value)}, not a map"
            )

        if len(names) == 1 and base is _identity:
            key = names[0]

            def get_one(data: Any) -> Any:
                try:
                    return data[key]
                except Exception:
                    raise fail(data, 0) from None

            def get_one_or_none(data: Any) -> Any:
                if isinstance(data, Mapping) and key not in data:
                    return None
                return get_one(data)

            get_one.if_missing_false = get_one_or_none  # type: ignore[attr-defined]
            return get_one

        def get_chain(data: Any, missing_ok: bool = False) -> Any:
            value = base(data)
            for depth, key in enumerate(names):
                if not isinstance(value, Mapping):
                    raise fail(value, depth)
                if missing_ok and key not in value:
                    return None
                try:
                    value = value[key]
                except Exception:
                    raise fail(value, depth) from None
            return value

        get_chain.if_missing_false = (  # type: ignore[attr-defined]
            lambda data: get_chain(data, True))
        return get_chain

    # -- commands and calls ---------------------------------------------------------------

    def _compile_command(self, ops: list[_Op], piped: _Getter | None) -> _Getter:
        first = ops[0]
        if first.kind == "ident":
            return self._call(first, ops[1:], piped)
        if len(ops) > 1:
            raise self.err(first.off, f"{first.text} is not a function: it takes no arguments")
        if piped is not None:
            raise self.err(
                first.off, f"cannot pipe into {first.text}: only a function takes a piped value"
            )
        if first.kind == "const" and first.const is not None and first.const[0] is None:
            raise self.err(first.off, "nil is not a command")
        assert first.fn is not None
        return first.fn

    def _call(self, ident: _Op, args: list[_Op], piped: _Getter | None) -> _Getter:
        name, off = ident.name, ident.off
        spec = self.funcs[name]
        count = len(args) + (piped is not None)
        if name in self.user_funcs:
            self._check_user_arity(name, self.user_funcs[name], count, off)
        elif count < spec.min_args or (spec.max_args is not None and count > spec.max_args):
            if spec.max_args is None:
                want = f"at least {spec.min_args}"
            else:
                want = str(spec.max_args)
            raise self.err(off, f"wrong number of arguments for {name}: want {want}, got {count}")
        fns: list[_Getter] = []
        for index, arg in enumerate(args, start=1):
            if arg.kind == "ident":
                fn = self._call(arg, [], None)
            elif arg.kind == "const" and spec.int_args:
                fn = self._int_const(name, index, arg)
            else:
                assert arg.fn is not None
                fn = arg.fn
            if spec.int_args and arg.kind != "const":
                fn = self._int_checked(name, index, arg.off, fn)
            fns.append(fn)
        if piped is not None:
            fns.append(self._int_checked(name, count, off, piped) if spec.int_args else piped)
        if spec.lazy:
            return self._lazy(spec.lazy, fns)
        return self._invoke(name, spec.impl, fns, off)

    def _check_user_arity(self, name: str, fn: Callable[..., Any], count: int, off: int) -> None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return
        try:
            sig.bind(*range(count))
        except TypeError:
            raise self.err(
                off, f"wrong number of arguments for {name}: {count} do not fit {name}{sig}"
            ) from None

    def _int_const(self, name: str, index: int, arg: _Op) -> _Getter:
        assert arg.const is not None
        value, as_int = arg.const
        if as_int is None or isinstance(value, bool):
            raise self.err(arg.off, f"wrong type for argument {index} of {name}: "
                                    f"want int, got {_describe(value)}")
        return lambda _data: as_int

    def _int_checked(self, name: str, index: int, off: int, fn: _Getter) -> _Getter:
        where = self.where

        def checked(data: Any) -> int:
            v = fn(data)
            if v.__class__ is int:
                return v
            if isinstance(v, numbers.Integral) and not isinstance(v, bool):
                return int(v)
            raise where.error(
                off, f"wrong type for argument {index} of {name}: want int, got {_describe(v)}"
            )

        return checked

    def _invoke(self, name: str, impl: Callable[..., Any], fns: list[_Getter],
                off: int) -> _Getter:
        where = self.where

        def fail(exc: Exception) -> TemplateError:
            return where.error(off, f"error calling {name}: {exc}")

        if len(fns) == 2:
            a, b = fns

            def call2(data: Any) -> Any:
                x, y = a(data), b(data)
                try:
                    return impl(x, y)
                except TemplateError:
                    raise
                except Exception as exc:
                    raise fail(exc) from exc

            return call2

        def call(data: Any) -> Any:
            values = [f(data) for f in fns]
            try:
                return impl(*values)
            except TemplateError:
                raise
            except Exception as exc:
                raise fail(exc) from exc

        return call

    @staticmethod
    def _lazy(op: str, fns: list[_Getter]) -> _Getter:
        """Go's and/or: the first argument that decides (empty / non-empty), else the last."""
        stop_on = op == "or"

        def run(data: Any) -> Any:
            value = None
            for f in fns:
                value = f(data)
                if _truth(value) == stop_on:
                    return value
            return value

        return run


# ---------------------------------------------------------------------------------------------
# Public API.


class Template:
    """A template parsed once; :meth:`render` it with many data maps.

    Parameters
    ----------
    text : str
        The template text (for example a pod YAML with ``{{ .Index }}`` actions).
    source : str
        Where the text came from; every error message starts with it.
    funcs : mapping of str to callable, optional
        Extra functions (Go's ``Funcs``). They get the evaluated Python arguments and may replace
        a builtin of the same name. An exception they raise becomes a TemplateError
        ``error calling NAME: ...``.

    Attributes
    ----------
    fields : frozenset of str
        Top-level data names the template refers to, in any branch (``.Index`` -> ``"Index"``),
        so a caller can check its data map before rendering thousands of times.
    is_static : bool
        True when nothing is left to evaluate; :meth:`render` then returns the text itself.

    Raises
    ------
    TemplateError
        The text does not parse: unclosed action, unknown function, wrong argument count, ...
    """

    __slots__ = ("_render", "_static", "fields", "source", "text")

    def __init__(self, text: str, *, source: str = "<template>",
                 funcs: Mapping[str, Callable[..., Any]] | None = None) -> None:
        self.text = text
        self.source = source
        if "{{" not in text:
            self._static: str | None = text
            self._render: Callable[[Any], str] | None = None
            self.fields: frozenset[str] = frozenset()
            return
        compiler = _Compiler(text, _Where(source, text), funcs)
        body = _join(compiler.compile())
        self.fields = frozenset(compiler.fields)
        if isinstance(body, str):  # only comments or trimmed space: static after all
            self._static, self._render = body, None
        else:
            self._static, self._render = None, body

    @property
    def is_static(self) -> bool:
        """True when the template has no actions left to evaluate (plain text, comments)."""
        return self._static is not None

    def render(self, data: Mapping[str, Any]) -> str:
        """The template evaluated with ``data`` as ``.`` (and ``$``)."""
        render = self._render
        if render is None:
            return self._static  # type: ignore[return-value]
        return render(data)

    def __repr__(self) -> str:
        return f"Template(source={self.source!r}, fields={sorted(self.fields)!r})"


@functools.lru_cache(maxsize=256)
def _cached(text: str, source: str) -> Template:
    return Template(text, source=source)


def render(text: str, data: Mapping[str, Any], *, source: str = "<template>",
           funcs: Mapping[str, Callable[..., Any]] | None = None) -> str:
    """Render ``text`` with ``data``; parsed templates are cached when ``funcs`` is None."""
    template = _cached(text, source) if funcs is None else Template(text, source=source,
                                                                     funcs=funcs)
    return template.render(data)
