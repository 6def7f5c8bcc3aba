"""The toolkit's one exception family.

Every user-facing problem raises a subclass of :class:`ToolkitError`. The CLI catches the family,
prints one line on stderr and exits with :attr:`ToolkitError.exit_code` (2 for bad input, 1 for
failures that are not the user's input). Anything else that escapes is a bug.

This module imports only the standard library so that the CLI starts quickly.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

__all__ = [
    "ToolkitError",
    "Interrupted",
    "ComponentFailed",
    "DatasetError",
    "ArffFormatError",
    "UnknownComponentError",
    "ParameterError",
    "CapabilityError",
    "PluginError",
    "PluginLoadError",
    "ModelFileError",
    "ResultsFileError",
    "ToolkitWarning",
    "shorten",
    "warn",
]


def shorten(text: str, width: int = 60) -> str:
    """Return ``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    if len(text) <= width:
        return text
    return text[: width - 3] + "..."


class ToolkitError(Exception):
    """Base of every error the toolkit raises for a problem the user can act on."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class DatasetError(ToolkitError):
    """A dataset cannot be found, read, or used as asked."""


class ArffFormatError(DatasetError):
    """An ARFF file breaks the format: ``path:line: what; expected what``."""

    def __init__(self, path: str | None, line: int | None, problem: str, text: str | None = None,
                 hint: str | None = None):
        self.path = path
        self.line = line
        self.problem = problem
        self.text = text
        self.hint = hint
        where = str(path) if path is not None else "<string>"
        if line is not None:
            where = f"{where}:{line}"
        message = f"{where}: {problem}"
        if text is not None:
            message += f" in '{shorten(text)}'"
        if hint:
            message += f"; {hint}"
        super().__init__(message)


class UnknownComponentError(ToolkitError):
    """A classifier, selector or evaluator name that no plugin registered."""

    def __init__(self, kind: str, name: str, suggestions: Sequence[str] = (), total: int = 0):
        self.kind = kind
        self.name = name
        self.suggestions = tuple(suggestions)
        message = f"unknown {kind} '{name}'"
        if self.suggestions:
            message += "; did you mean " + " or ".join(f"'{s}'" for s in self.suggestions) + "?"
        message += f" (`toolkit list` shows all {total})"
        super().__init__(message)


class ParameterError(ToolkitError):
    """A hyperparameter name or value that a component does not accept."""


class CapabilityError(ToolkitError):
    """Data the component declared it cannot handle (sparse, missing values, weights, ...)."""


class PluginError(ToolkitError):
    """A plugin registered something invalid (bad name, duplicate, grid key that is not a parameter)."""


class PluginLoadError(PluginError):
    """A plugin's entry point failed to import; raised only in strict mode."""

    def __init__(self, entry_point: str, distribution: str | None, cause: BaseException):
        self.entry_point = entry_point
        self.distribution = distribution
        self.cause = cause
        dist = f"plugin {distribution}" if distribution else "a plugin of no known distribution"
        super().__init__(
            f"{dist} (entry point '{entry_point}') failed to import: "
            f"{type(cause).__name__}: {cause}"
        )


class ModelFileError(ToolkitError):
    """A model file that is damaged, tampered with, or does not fit the data."""


class ResultsFileError(ToolkitError):
    """A results (JSON lines) file that cannot be read or does not match the run."""


class ComponentFailed(ToolkitError):
    """A component raised an exception that is no ToolkitError while fitting or predicting: a bug in it or
    in its plugin (the harness records such a repetition as failed; train and predict stop on it)."""

    exit_code = 1


class Interrupted(ToolkitError):
    """The user stopped a command (Ctrl-C); the message says what was saved."""

    exit_code = 130


class ToolkitWarning(UserWarning):
    """Warnings the toolkit shows once per distinct message."""


def warn(message: str, stacklevel: int = 2) -> None:
    """Issue a :class:`ToolkitWarning`."""
    warnings.warn(message, ToolkitWarning, stacklevel=stacklevel + 1)
