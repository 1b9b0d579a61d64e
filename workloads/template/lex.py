"""Lexer: template text -> literal text chunks and actions (lists of tokens).

Trim markers and comments are applied here; literals (numbers, strings with Go's escapes,
characters) are decoded to their values. :func:`_lex_token` is a long ``if``/``elif`` chain
over the first character of a token: one branch per token kind, kept together as a table.
"""

from __future__ import annotations

import re
from typing import Any

from workloads.template.errors import Where

__all__ = ["KEYWORDS", "SPACE", "Action", "Tok", "scan"]

SPACE = " \t\r\n"
KEYWORDS = frozenset(
    {"if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"}
)
_OCTAL_OR_DECIMAL = re.compile(r"0[0-7_]*|[0-9_]+")
_INT64_MIN, _INT64_LIMIT = -(2**63), 2**63


class Tok:
    __slots__ = ("end", "kind", "off", "spaced", "val")

    def __init__(self, kind: str, val: Any, off: int, end: int, spaced: bool) -> None:
        self.kind = kind  # field dot var ident kw const ( ) | decl ,
        self.val = val
        self.off = off
        self.end = end
        self.spaced = spaced  # white space (or the action start) precedes it


class Action:
    __slots__ = ("off", "toks")

    def __init__(self, off: int, toks: list[Tok]) -> None:
        self.off = off
        self.toks = toks


def _is_word_char(c: str) -> bool:
    return c == "_" or c.isalnum()


def scan(text: str, where: Where) -> list[str | Action]:
    """Split the template into text chunks and actions; apply trim markers; drop comments."""
    items: list[str | Action] = []
    pos, n, trim_next = 0, len(text), False
    while True:
        start = text.find("{{", pos)
        chunk = text[pos:] if start < 0 else text[pos:start]
        if trim_next:
            chunk = chunk.lstrip(SPACE)
        if start < 0:
            if chunk:
                items.append(chunk)
            return items
        i = start + 2
        if text.startswith("-", i) and i + 1 < n and text[i + 1] in SPACE:
            chunk = chunk.rstrip(SPACE)
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
            elif j < n and text[j] in SPACE and text.startswith("-}}", j + 1):
                pos, trim_next = j + 4, True
            else:
                raise where.error(close, 'comment ends before the closing "}}"')
            continue
        toks, pos, trim_next = _lex_action(text, i, start, where)
        items.append(Action(start, toks))


def _lex_action(text: str, i: int, start: int, where: Where) -> tuple[list[Tok], int, bool]:
    """The tokens of the action whose text starts at ``i`` (its ``{{`` at ``start``), the
    offset after its ``}}`` and whether that was a trim marker ``-}}``."""
    toks: list[Tok] = []
    n = len(text)
    spaced = True
    while True:
        if i >= n:
            raise where.error(start, 'unclosed action: no closing "}}"')
        c = text[i]
        if c in SPACE:
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
        kind, val, i, word = _lex_token(text, i, where)
        if word and i < n and text[i] not in SPACE and text[i] not in ".|()=:,}":
            hint = ""
            if text.startswith("-}}", i):
                hint = ' (a trim marker needs white space before it: " -}}")'
            raise where.error(i, f"unexpected {text[i]!r} after {text[off:i]}{hint}")
        toks.append(Tok(kind, val, off, i, spaced))
        spaced = False


def _lex_token(text: str, i: int, where: Where) -> tuple[str, Any, int, bool]:
    """(kind, value, offset after it, whether it is a word) of the token starting at ``i``.

    A word (a field, variable or identifier) must be followed by a terminator. One branch per
    token kind, chosen by the first character: a table kept as one chain.
    """
    n = len(text)
    c = text[i]
    off = i
    word = False
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
            kind = "kw" if val in KEYWORDS else "ident"
    elif text.startswith("/*", i):
        raise where.error(off, 'a comment must follow "{{" or "{{- " directly: {{/* ... */}}')
    else:
        raise where.error(off, f"unexpected {c!r} in action")
    return kind, val, i, word


def _scan_quoted(text: str, i: int, quote: str, where: Where) -> int:
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


def _unquote(body: str, quote: str, where: Where, off: int) -> str:
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


def _scan_number(text: str, i: int, where: Where) -> int:
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


def _number(text: str, where: Where, off: int) -> tuple[int | float, int | None]:
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

