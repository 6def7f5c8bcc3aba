"""Write a file in one step: readers never see half a file, and a failed write keeps the old one."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from toolkit.errors import ToolkitError

__all__ = ["replaced_atomically", "temporary_name_pattern"]


def temporary_name_pattern(path: str | os.PathLike[str]) -> re.Pattern[str]:
    """The names of the temporary files :func:`replaced_atomically` makes for ``path``:
    ``.NAME.PID.RANDOM.tmp`` beside it (hidden, and never a name a reader would take for the file)."""
    name = os.path.basename(os.fspath(path))
    return re.compile(r"^\." + re.escape(name) + r"\.(\d+)\.[A-Za-z0-9_]+\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(path: str) -> None:
    """Remove temporaries of ``path`` left by processes that no longer run (a kill -9 mid-write)."""
    folder = os.path.dirname(os.path.abspath(path))
    pattern = temporary_name_pattern(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for entry in names:
        match = pattern.match(entry)
        if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            try:
                os.remove(os.path.join(folder, entry))
            except OSError:
                pass


def _umask() -> int:
    """The process's umask: read from /proc (Linux), else by setting it and back (a moment in which a file
    made by another thread would get no mask)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def replaced_atomically(path: str | os.PathLike[str], error: type[ToolkitError]) -> Iterator[str]:
    """Yield a temporary path beside ``path``, unique to this call; when the block succeeds it replaces
    ``path``. An ``OSError`` becomes ``error`` naming the file; on any exception the temporary file is
    removed, and temporaries of killed earlier writers are cleaned first."""
    target = os.fspath(path)
    if os.path.islink(target):   # replace the file the link names and keep the link
        target = os.path.realpath(target)
    if os.path.exists(target) and not os.path.isfile(target):
        # a device or a pipe (/dev/stdout): written in place; replacing it would put a file where it was
        yield target
        return
    folder = os.path.dirname(os.path.abspath(target))
    _remove_stale(target)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.{os.getpid()}.", suffix=".tmp")
        os.close(fd)
    except OSError as exc:
        raise error(f"{target}: cannot write ({exc.strerror or exc})") from None
    try:
        yield tmp
        # mkstemp makes the file 0600; the file takes the mode any new file gets here (0644 under umask 022),
        # or keeps the mode of the file it replaces
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        raise error(f"{target}: cannot write ({exc.strerror or exc})") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
