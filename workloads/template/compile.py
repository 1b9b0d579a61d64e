"""Parser + compiler: lexed items -> a list of literal strings and closures taking the data.

The structure (``if`` / ``else if`` / ``else`` / ``end``) and pipelines are compiled here;
operands and field lookups in :mod:`workloads.template.operands`, function calls in
:mod:`workloads.template.calls`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from workloads.template.calls import CallCompiler
from workloads.template.errors import TemplateError, Where
from workloads.template.funcs import BUILTINS, Func, user_func
from workloads.template.lex import Action, Tok, scan
from workloads.template.operands import Getter, Operand, TokenStream, field_getter, identity
from workloads.template.values import go_format, go_str, truth

__all__ = ["Compiler", "join"]

def merge(parts: list[Any]) -> list[Any]:
    """Adjacent literal strings merged into one (comments and trims leave them apart)."""
    merged: list[Any] = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif not (isinstance(p, str) and not p):
            merged.append(p)
    return merged


def join(parts: list[Any]) -> str | Callable[[Any], str]:
    """A static string, or one closure rendering the parts (literal strings and closures).

    The closure is straight-line code, ``"".join((p0, p1(data), p2))``, generated from the
    part indexes only (like dataclasses' generated methods): on Python 3.11 a comprehension
    over the parts costs about as much again as the whole render of a one-action template.
    """
    merged = merge(parts)
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




class Compiler:
    """One template's text -> parts (literal strings and closures); ``fields`` collects the
    top-level data names it refers to."""

    def __init__(self, text: str, where: Where, funcs: Mapping[str, Callable[..., Any]] | None):
        self.where = where
        self.text = text
        self.funcs: dict[str, Func] = dict(BUILTINS)
        for name, fn in (funcs or {}).items():
            self.funcs[name] = user_func(fn)
        self.user_funcs = dict(funcs or {})
        self.calls = CallCompiler(where, self.funcs, self.user_funcs)
        self.fields: set[str] = set()
        self.items = scan(text, where)
        self.pos = 0

    def err(self, off: int, problem: str) -> TemplateError:
        return self.where.error(off, problem)

    # -- structure ------------------------------------------------------------------------

    def compile(self) -> list[Any]:
        parts, stop = self._list()
        if stop is not None:
            raise self.err(stop.off, f"unexpected {{{{{stop.toks[0].val}}}}}")
        return parts

    def _list(self) -> tuple[list[Any], Action | None]:
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
            ts = TokenStream(toks)
            fn = self._pipeline(ts, item.off, "action")
            self._expect_end_of_action(ts, "the pipeline")
            parts.append(self._printer(fn, ts))
        return parts, None

    def _if(self, item: Action) -> Any:
        branches: list[tuple[Getter, Any]] = []
        else_body: Any = ""
        cond_action = item
        cond_toks = TokenStream(item.toks)
        cond_toks.next()  # "if"
        while True:
            cond = self._pipeline(cond_toks, cond_action.off, "if")
            # Go: a missing map key is "no value", which `if` takes as false
            cond = getattr(cond, "if_missing_false", cond)
            self._expect_end_of_action(cond_toks, "the if condition")
            body, stop = self._list()
            if stop is None:
                raise self.err(item.off, "{{if}} has no matching {{end}}")
            branches.append((cond, join(body)))
            st = TokenStream(stop.toks)
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
            self._expect_end_of_action(TokenStream(stop2.toks[1:]), "end")
            else_body = join(body)
            break
        return self._if_closure(branches, else_body)

    @staticmethod
    def _if_closure(branches: list[tuple[Getter, Any]], else_body: Any) -> Any:
        def run_body(body: Any, data: Any) -> str:
            return body if body.__class__ is str else body(data)

        if len(branches) == 1:
            (cond, body), = branches

            def run_if(data: Any) -> str:
                if truth(cond(data)):
                    return run_body(body, data)
                return run_body(else_body, data)

            return run_if

        def run_chain(data: Any) -> str:
            for cond, body in branches:
                if truth(cond(data)):
                    return run_body(body, data)
            return run_body(else_body, data)

        return run_chain

    def _expect_end_of_action(self, ts: TokenStream, kw: str) -> None:
        extra = ts.peek()
        if extra is not None:
            raise self.err(extra.off, f"unexpected {self._tok_text(extra)!r} after {kw}")

    def _tok_text(self, tok: Tok) -> str:
        return self.text[tok.off:tok.end]

    def _printer(self, fn: Getter, ts: TokenStream) -> Callable[[Any], str]:
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
                return go_format(v)

            return print_field

        def print_value(data: Any) -> str:
            return go_str(fn(data))

        return print_value

    # -- pipelines ------------------------------------------------------------------------

    def _pipeline(self, ts: TokenStream, action_off: int, context: str) -> Getter:
        first = ts.peek()
        if first is None or first.kind == ")":
            off = first.off if first is not None else action_off
            raise self.err(off, f"missing value for {context}")
        if first.kind == "var" and len(ts.toks) > ts.i + 1 and ts.toks[ts.i + 1].kind == "decl":
            raise self.err(first.off, "variables are not supported (only $ is)")
        fn: Getter | None = None
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

    def _command(self, ts: TokenStream) -> list[Operand]:
        ops: list[Operand] = []
        while True:
            tok = ts.peek()
            if tok is None or tok.kind in ("|", ")"):
                return ops
            if ops and not tok.spaced and tok.kind not in ("(", ",", "decl"):
                raise self.err(tok.off, f"missing space before {self._tok_text(tok)!r}")
            ops.append(self._operand(ts))

    def _operand(self, ts: TokenStream) -> Operand:
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
            return Operand("value", tok.off, self.text[tok.off:end],
                       fn=field_getter(self.where, identity, prefix, tuple(names), tok.off))
        if kind == "const":
            value, _ = tok.val
            nxt = ts.peek()
            if nxt is not None and nxt.kind == "field" and not nxt.spaced:
                raise self.err(nxt.off, f"unexpected {nxt.val!r} after a literal")
            return Operand("const", tok.off, self._tok_text(tok), fn=lambda _data: value,
                       const=tok.val)
        if kind == "ident":
            if tok.val not in self.funcs:
                raise self.err(tok.off, self._unknown_function(tok.val))
            return Operand("ident", tok.off, tok.val, name=tok.val)
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
            fn = field_getter(self.where, inner, text[: close.end - tok.off], tuple(names),
                              tok.off)
            return Operand("value", tok.off, text, fn=fn)
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

    # -- commands and calls ---------------------------------------------------------------

    def _compile_command(self, ops: list[Operand], piped: Getter | None) -> Getter:
        first = ops[0]
        if first.kind == "ident":
            return self.calls.call(first, ops[1:], piped)
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

