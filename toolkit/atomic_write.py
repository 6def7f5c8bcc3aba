"""Write a file in one step: readers never see half a file, and a failed write keeps the old one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from toolkit.errors import ToolkitError

__all__ = ["replaced_atomically"]


@contextmanager
def replaced_atomically(path: str | os.PathLike[str], error: type[ToolkitError]) -> Iterator[str]:
    """Yield a temporary path beside ``path``; when the block succeeds it replaces ``path``. An
    ``OSError`` becomes ``error`` naming the file; the temporary file never stays behind."""
    tmp = str(path) + ".tmp"
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        raise error(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
