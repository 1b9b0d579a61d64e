"""Test setup shared by every test folder.

When a hypothesis test fails, hypothesis' pytest plugin imports ``hypothesis.extra._patching``
(and through it libcst and mypy_extensions) to print a suggested ``@example`` patch. That import
emits a DeprecationWarning, which ``filterwarnings = ["error"]`` in pyproject.toml turns into a
pytest INTERNALERROR that hides the falsifying example. Importing it here once, with the
warning silenced, keeps a failing property test readable.
"""

from __future__ import annotations

import contextlib
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    with contextlib.suppress(ImportError):
        import hypothesis.extra._patching  # noqa: F401
