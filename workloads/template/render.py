"""The public entry: :class:`Template` (parse once, render many) and :func:`render`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from workloads.template.compile import Compiler, join
from workloads.template.control import RANGE_BUDGET
from workloads.template.errors import Where

__all__ = ["Template", "render"]


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

    __slots__ = ("_pad", "_render", "_static", "fields", "source", "text")

    def __init__(self, text: str, *, source: str = "<template>",
                 funcs: Mapping[str, Callable[..., Any]] | None = None) -> None:
        self.text = text
        self.source = source
        if "{{" not in text:
            self._static: str | None = text
            self._render: Callable[[Any], str] | None = None
            self.fields: frozenset[str] = frozenset()
            self._pad = ()
            return
        compiler = Compiler(text, Where(source, text), funcs)
        body = join(compiler.compile())
        self.fields = frozenset(compiler.fields)
        # the variables after $: the range budget, then one slot per declared variable
        self._pad: tuple[Any, ...] = (RANGE_BUDGET,) + (None,) * (compiler.slots - 2)
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
        return render(data, [data, *self._pad])

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
