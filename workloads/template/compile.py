"""Parser + compiler: lexed items -> a list of literal strings and closures taking the data.

The structure (``if`` / ``with`` / ``range`` with their ``else`` branches, variable
declarations and assignments) and pipelines are compiled here; operands and field lookups in
:mod:`workloads.template.operands`, function calls in :mod:`workloads.template.calls`, the
closures of ``with`` / ``range`` / variables in :mod:`workloads.template.control`.

Variables are scoped as in Go: one declared in an action lives to the ``{{end}}`` of the
control structure around it (or to the end of the template); one declared in a control
action (``with $x := ...``, ``range $i, $v := ...``) lives to that structure's ``{{end}}``.
Each declaration gets its own slot in the render's variable list.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from workloads.template.calls import CallCompiler
from workloads.template.control import (
    Body,
    assign_closure,
    jump_closure,
    jump_join,
    range_closure,
    run_body,
    with_closure,
)
from workloads.template.errors import TemplateError, Where
from workloads.template.funcs import BUILTINS, Func, user_func
from workloads.template.lex import Action, Tok, scan
from workloads.template.operands import (
    Getter,
    Operand,
    TokenStream,
    field_getter,
    identity,
    variable,
)
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
        name if isinstance(p, str) else f"{name}(data, variables)" for name, p in names.items()
    )
    namespace: dict[str, Any] = {}
    exec(f"def _render(data, variables):\n    return ''.join(({items},))\n", names, namespace)
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
        self.scopes: list[dict[str, int]] = [{"$": 0}]  # variable name -> slot, innermost last
        self.slots = 2  # slot 0 is $, slot 1 the range budget (control.BUDGET_SLOT)
        self.dot_is_root = True  # False inside with/range bodies (for ``fields``)
        self.range_depth = 0  # ranges around the action being compiled (break/continue)
        self.jumps = 0  # break/continue actions compiled so far

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
                parts.append(self._control(item))
                continue
            ts = TokenStream(toks)
            if head.kind == "var" and len(toks) > 1 and toks[1].kind in ("decl", ","):
                parts.append(self._assignment(ts, item))
                continue
            fn = self._pipeline(ts, item.off, "action")
            self._expect_end_of_action(ts, "the pipeline")
            parts.append(self._printer(fn, ts))
        return parts, None

    def _control(self, item: Action) -> Any:
        """if / with / range, each in its own variable scope."""
        head = item.toks[0]
        if head.val in ("break", "continue"):
            return self._jump(item)
        compile_fn = {"if": self._if, "with": self._with, "range": self._range}.get(head.val)
        if compile_fn is None:
            raise self.err(
                head.off,
                f"{{{{{head.val}}}}} is not supported by this renderer "
                "(it implements if, with, range, break, continue, else and end; upstream "
                "templates use no other)",
            )
        self.scopes.append({})
        try:
            return compile_fn(item)
        finally:
            self.scopes.pop()

    # -- variables ------------------------------------------------------------------------

    def _declare(self, tok: Tok) -> int:
        slot = self.slots
        self.slots += 1
        self.scopes[-1][tok.val] = slot
        return slot

    def _lookup_var(self, tok: Tok) -> int:
        for scope in reversed(self.scopes):
            if tok.val in scope:
                return scope[tok.val]
        raise self.err(tok.off, f'undefined variable "{tok.val}"')

    def _assignment(self, ts: TokenStream, item: Action) -> Any:
        """``{{$x := pipeline}}`` (declares $x) or ``{{$x = pipeline}}`` (sets it)."""
        slots = self._variables(ts, item, "a variable action", allow=1)
        fn = self._pipeline(ts, item.off, "the variable's value")
        self._expect_end_of_action(ts, "the pipeline")
        return assign_closure(slots[0], fn)

    def _variables(self, ts: TokenStream, item: Action, what: str, allow: int) -> tuple[int, ...]:
        """The variables a control or variable action declares (``$i, $v :=``) or assigns
        (``$x =``), as slots; empty when the action starts with no variable."""
        toks = ts.toks[ts.i:]
        count = 2 if len(toks) > 3 and toks[1].kind == "," else 1
        if not toks or toks[0].kind != "var" or len(toks) <= count or (
                count == 1 and toks[1].kind not in ("decl", ",")):
            return ()
        names = [toks[0]] + ([toks[2]] if count == 2 else [])
        decl = toks[2 * count - 1]
        if count > allow or any(t.kind != "var" for t in names) or decl.kind != "decl":
            raise self.err(toks[0].off, f"bad variable declaration in {what}: want "
                           + ("$x := pipeline" if allow == 1 else
                              "$x := pipeline or $i, $x := pipeline"))
        if any(t.val == "$" for t in names):
            raise self.err(toks[0].off, "cannot declare or assign $")
        ts.i += 2 * count
        if decl.val == "=":
            return tuple(self._lookup_var(t) for t in names)
        return tuple(self._declare(t) for t in names)

    # -- control structures ---------------------------------------------------------------

    def _jump(self, item: Action) -> Any:
        head = item.toks[0]
        if not self.range_depth:
            raise self.err(head.off, f"{{{{{head.val}}}}} outside {{{{range}}}}")
        self._expect_end_of_action(TokenStream(item.toks[1:]), head.val)
        self.jumps += 1
        return jump_closure(head.val == "break")

    def _branch_body(self, opener: Action, name: str, root: bool) -> tuple[Body, Action]:
        """A branch's body and the {{else ...}} / {{end}} action that closes it."""
        saved, jumps = self.dot_is_root, self.jumps
        self.dot_is_root = saved and root
        try:
            body, stop = self._list()
        finally:
            self.dot_is_root = saved
        if stop is None:
            raise self.err(opener.off, f"{{{{{name}}}}} has no matching {{{{end}}}}")
        if self.jumps != jumps:  # keeps what it printed before a break/continue
            return jump_join(merge(body)), stop
        return join(body), stop

    def _else_kind(self, stop: Action, name: str, chain: str) -> tuple[str, TokenStream]:
        """"end", "else" or "chain" (``else if`` in an if, ``else with`` in a with)."""
        st = TokenStream(stop.toks)
        kw = st.next().val
        if kw == "end":
            self._expect_end_of_action(st, "end")
            return "end", st
        nxt = st.peek()
        if nxt is not None and nxt.kind == "kw" and nxt.val in ("if", "with"):
            if nxt.val != chain:
                raise self.err(nxt.off, f"{{{{else {nxt.val}}}}} in a {{{{{name}}}}}: "
                               f"expected {{{{else}}}}, {{{{else {chain}}}}} or {{{{end}}}}"
                               if chain else f"expected {{{{else}}}} or {{{{end}}}} in a "
                               f"{{{{{name}}}}}, found {{{{else {nxt.val}}}}}")
            st.next()
            return "chain", st
        self._expect_end_of_action(st, "else")
        return "else", st

    def _else_body(self, opener: Action, name: str) -> Body:
        body, stop = self._branch_body(opener, name, root=True)
        if stop.toks[0].val != "end":
            raise self.err(stop.off, f"{{{{else}}}} after {{{{else}}}} in the same "
                                     f"{{{{{name}}}}}")
        self._expect_end_of_action(TokenStream(stop.toks[1:]), "end")
        return body

    def _with(self, item: Action) -> Any:
        branches: list[tuple[Getter, int | None, Body]] = []
        action, ts = item, TokenStream(item.toks)
        ts.next()  # "with"
        while True:
            slots = self._variables(ts, action, "with", allow=1)
            cond = self._pipeline(ts, action.off, "with")
            cond = getattr(cond, "if_missing_false", cond)  # Go: a missing key is empty
            self._expect_end_of_action(ts, "the with pipeline")
            body, stop = self._branch_body(item, "with", root=False)
            branches.append((cond, slots[0] if slots else None, body))
            kind, ts = self._else_kind(stop, "with", "with")
            if kind == "end":
                return with_closure(branches, "")
            if kind == "else":
                return with_closure(branches, self._else_body(item, "with"))
            action = stop

    def _range(self, item: Action) -> Any:
        ts = TokenStream(item.toks)
        ts.next()  # "range"
        slots = self._variables(ts, item, "range", allow=2)
        fn = self._pipeline(ts, item.off, "range")
        self._expect_end_of_action(ts, "the range pipeline")
        self.range_depth += 1
        try:
            body, stop = self._branch_body(item, "range", root=False)
        finally:
            self.range_depth -= 1
        kind, _ = self._else_kind(stop, "range", "")
        else_body = self._else_body(item, "range") if kind == "else" else ""
        return range_closure(self.where, item.toks[0].off, fn, slots, body, else_body)

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
            body, stop = self._branch_body(item, "if", root=True)
            branches.append((cond, body))
            kind, st = self._else_kind(stop, "if", "if")
            if kind == "end":
                break
            if kind == "chain":  # {{else if ...}}
                cond_action, cond_toks = stop, st
                continue
            else_body = self._else_body(item, "if")
            break
        return self._if_closure(branches, else_body)

    @staticmethod
    def _if_closure(branches: list[tuple[Getter, Any]], else_body: Any) -> Any:
        if len(branches) == 1:
            (cond, body), = branches

            def run_if(data: Any, variables: list[Any]) -> str:
                if truth(cond(data, variables)):
                    return run_body(body, data, variables)
                return run_body(else_body, data, variables)

            return run_if

        def run_chain(data: Any, variables: list[Any]) -> str:
            for cond, body in branches:
                if truth(cond(data, variables)):
                    return run_body(body, data, variables)
            return run_body(else_body, data, variables)

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

            def print_field(data: Any, variables: list[Any]) -> str:
                try:
                    v = data[key]
                except Exception:
                    v = slow(data, variables)  # raises the located error
                t = v.__class__
                if t is int:
                    return str(v)
                if t is str:
                    return v
                return go_format(v)

            return print_field

        def print_value(data: Any, variables: list[Any]) -> str:
            return go_str(fn(data, variables))

        return print_value

    # -- pipelines ------------------------------------------------------------------------

    def _pipeline(self, ts: TokenStream, action_off: int, context: str) -> Getter:
        first = ts.peek()
        if first is None or first.kind == ")":
            off = first.off if first is not None else action_off
            raise self.err(off, f"missing value for {context}")
        if first.kind == "var" and len(ts.toks) > ts.i + 1 and ts.toks[ts.i + 1].kind in (
                "decl", ","):
            raise self.err(first.off, f"a variable can be declared only at the start of an "
                                      f"action or of a with/range pipeline, not in {context}")
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
            base = variable(self._lookup_var(tok)) if kind == "var" else identity
            names = [tok.val] if kind == "field" else []
            end = tok.end
            while (nxt := ts.peek()) is not None and nxt.kind == "field" and not nxt.spaced:
                names.append(ts.next().val)
                end = nxt.end
            prefix = tok.val if kind == "var" else ""
            if names and (tok.val == "$" or (kind == "field" and self.dot_is_root)):
                self.fields.add(names[0])
            return Operand("value", tok.off, self.text[tok.off:end],
                       fn=field_getter(self.where, base, prefix, tuple(names), tok.off))
        if kind == "const":
            value, _ = tok.val
            nxt = ts.peek()
            if nxt is not None and nxt.kind == "field" and not nxt.spaced:
                raise self.err(nxt.off, f"unexpected {nxt.val!r} after a literal")
            return Operand("const", tok.off, self._tok_text(tok), fn=lambda _dot, _vars: value,
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
            raise self.err(tok.off, f"unexpected {tok.val!r}: a variable is declared as "
                                    "{{$x := pipeline}} at the start of an action")
        if kind == ",":
            raise self.err(tok.off, "unexpected ',' (only range declares two variables: "
                                    "{{range $i, $x := pipeline}})")
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

