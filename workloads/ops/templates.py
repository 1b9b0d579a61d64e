"""Object template files: read and parsed once, rendered per object.

A template without actions (``Template.is_static``) is parsed into one manifest shared by every
object; a template with actions is rendered with ``{"Index": i, "Count": n, **templateParams}``
and parsed per object, except that a rendering which differs from the first one only in plain
scalar values takes a copy of the first one's data with those values replaced
(:mod:`workloads.ops.scalar_patch`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scheduler_core.inputfile import InputFileError, read_text
from workloads.ops.errors import WorkloadError
from workloads.ops.manifests import load_yaml_text
from workloads.ops.scalar_patch import ScalarPatch
from workloads.template import Template, TemplateError

__all__ = ["TemplateFile"]


class TemplateFile:
    """One object template file (Go text/template), parsed once."""

    def __init__(self, path: Path, params: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.source = str(self.path)
        try:
            text = read_text(self.path, what="an object template (YAML, Go template)")
        except InputFileError as exc:
            raise WorkloadError(str(exc)) from None
        try:
            self.template = Template(text, source=self.source)
        except TemplateError as exc:
            raise WorkloadError(str(exc)) from None
        self.params = dict(params or {})
        self.static: Any = (load_yaml_text(self.template.render({}), self.source)
                            if self.template.is_static else None)
        self._patch: ScalarPatch | None = None  # the first rendering, see manifest()

    @property
    def is_static(self) -> bool:
        return self.template.is_static

    def manifest(self, index: int, count: int, *, extra: Mapping[str, Any] | None = None) -> Any:
        """The parsed object for ``index``; a static template's shared object (do not mutate
        it: deep-copy first). ``extra`` adds template variables (createCompositePodGroups'
        ``.Level`` ...)."""
        if self.template.is_static:
            return self.static
        data = {**self.params, **(extra or {}), "Index": index, "Count": count}
        try:
            text = self.template.render(data)
        except TemplateError as exc:
            raise WorkloadError(str(exc)) from None
        if self._patch is not None:
            patched = self._patch.patched(text)
            if patched is not None:
                return patched
        data = load_yaml_text(text, f"{self.source} (Index {index})")
        if self._patch is None:
            self._patch = ScalarPatch(text, data)
            data = self._patch.patched(text) if self._patch.usable else data
        return data

    def kind(self, count: int = 1) -> Any:
        m = self.manifest(0, max(count, 1))
        return m.get("kind") if isinstance(m, dict) else None
