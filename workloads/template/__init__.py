"""Go ``text/template`` for scheduler_perf object templates: the subset upstream uses.

Upstream renders every node, pod and object template file with Go's ``text/template`` and the
data map ``{"Index": i, "Count": n}`` (the newest harness merges ``templateParams`` into it). Two
generations of helper functions exist upstream:

* older: ``mod`` and ``div`` with Go ``int`` parameters (``8{{ mod .Index 12 }}``,
  ``{{ div 30000 .Count }}Mi`` in event_handling/templates);
* newer: ``AddInt SubtractInt MultiplyInt DivideInt Mod`` and ``AddFloat SubtractFloat
  MultiplyFloat DivideFloat``. Each takes numbers (or numeric strings), converts them to float64,
  and the ``*Int`` ones truncate the float result to int. ``Add*`` and ``Multiply*`` take any
  number of arguments. The DRA templates add ``Int`` (a number or numeric string as an int,
  truncated) and ``JSON`` (Go's ``json.Marshal``: compact, sorted map keys, ``null`` for nil).

A :class:`Template` is tokenised and parsed once into a flat list whose items are literal strings
or compiled closures, so rendering the same pod template thousands of times costs one list
comprehension and a ``str.join``; a template without actions renders by returning its text.

What is implemented: actions ``{{ }}`` with the trim markers ``{{- `` and `` -}}``; comments
``{{/* */}}``; pipelines of commands joined by ``|`` (the value on the left becomes the last
argument of the function on the right); operands ``.``, ``.Field``, ``.A.B``, ``$``,
``$.Field``, variables ``$x`` and ``$x.Field``; parenthesised pipelines (fields may follow them:
``(x).A``); int, float, string (with Go's escapes), raw string, character,
``true``/``false``/``nil`` literals; ``if`` / ``else if`` / ``else`` / ``end``; ``with`` /
``else with`` / ``else`` / ``end`` (Go 1.23's ``else with``); ``range`` over an int, a list or
a map, with no variable, ``$x :=`` or ``$i, $x :=``, with ``else``, ``break`` and
``continue``; variable declarations ``{{$x := pipeline}}`` and assignments
``{{$x = pipeline}}`` with Go's scoping (to the ``{{end}}`` of the enclosing control
structure); and these builtins besides the function maps:
``and or not eq ne lt le gt ge``. Go evaluates ``and``/``or`` lazily; so does this module.

Not implemented, each reported as a :class:`TemplateError`: ``define``, ``template``,
``block``, and the other Go builtins (``printf``, ``len``, ``index``,
...). No upstream template uses any of them.

Deliberate differences from Go:

* a missing map key is an error naming the fields that exist (Go's default ``missingkey``
  option would print ``<no value>`` and let the YAML decoder fail later, far from the cause),
  except as the whole condition of an ``if`` / ``with`` (and their ``else`` forms) or as an
  argument of ``and`` / ``or``, where Go's "no value" is empty (upstream writes
  ``{{if .priority}}``, ``{{with .priority}}`` and ``{{or .numDevices 10}}`` for optional
  parameters);
* a literal of the wrong type for ``mod``/``div`` is reported when the template is parsed,
  not when it runs;
* columns in messages are 1-based and count characters (Go: 0-based bytes, and only the line
  for parse errors).

Values print as Go's ``fmt`` ``%v`` prints them: ints as decimal, float64 in Go's shortest form
(``2.5``, ``3``, ``1e+06``, ``1e-05``), ``true``/``false``, strings raw, ``nil`` as
``<no value>``, lists as ``[a b]`` and maps as ``map[k:v]`` with sorted keys.

Modules: render (Template, render), lex (text -> tokens), compile (structure and pipelines),
control (the closures of with, range and variable actions),
operands (operands, field lookups), calls (function calls), funcs (the function table), values
(Go printing, types and truth), errors (TemplateError). Modules inside this package import
from each other, never from this facade.
"""

from __future__ import annotations

from workloads.template.errors import TemplateError
from workloads.template.render import Template, render

__all__ = ["Template", "TemplateError", "render"]
