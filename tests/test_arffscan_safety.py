"""Memory safety, bounded work and agreement with the strict engine of the C scanner
(toolkit/data/_arffscan.c) on hostile input.

These drive the scanner directly (its Parser API) where the reader's own buffers would hide a fault:
the reader hands over bytes and bytearrays, which end in a NUL that an over-read lands on unseen.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

import pytest

from toolkit.data import arff
from toolkit.errors import ArffFormatError

H_NUM = "@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(4)) + "@data\n"


def _lines() -> list[str]:
    """Data lines for the scanner's every way out of a line: each grammar point, cut after each token."""
    prefixes = ["1", "x", "'a'", "\"a\"", "1 2", "1,2", "?", "{", "{0", "{0 ", "{0 1", "{0 1}", "{0 1} ", "{0 'a'",
                "{1 x,0 1", "1,2,{3}", "{0 1}{2}", "{0 1} {2}", "{}", "{ }", "'a\\'", "'\\", "1e", "-", "+1.5",
                "123456789012345", "1234567890123456", "1,x,s", "1 x s", "{2 s}"]
    suffixes = ["", ",", " ,", ", ", ",,", " ", "\t", "{", "{2", "{2}", "{2},", "}", "},", "'", "\"", "\\", "%",
                ",%", ",{", " {", "\r", ",\r", "\r\n", ",\n"]
    rng = random.Random(20240611)
    alphabet = "{}',\"%?\\ \t\r\n0123456789xys-+.eE"
    randoms = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16))) for _ in range(3000)]
    return [p + s for p in prefixes for s in suffixes] + randoms


_AT_PAGE_END = textwrap.dedent("""
    import ctypes, json, mmap, sys
    from toolkit.data import _arffscan

    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    mm = mmap.mmap(-1, 2 * PAGE)
    anchor = ctypes.c_char.from_buffer(mm)
    assert libc.mprotect(ctypes.addressof(anchor) + PAGE, PAGE, 0) == 0  # PROT_NONE: a read there faults

    def parsers():
        yield _arffscan.Parser(bytes([0, 0]), [None, None], [None, None], [None, None], -1, -1)
        yield _arffscan.Parser(bytes([0, 1, 2]), [None, [b"x", b"a"], None], [None, None, ({}, [])],
                               [None, None, None], 1, -1)

    def run(data, view):
        out = []
        for p in parsers():
            pos, line = 0, 1
            while True:
                status, pos, line, line_end, after = p.feed(view, pos, len(data), line, 0, True)
                out.append((status, pos, line, line_end, after))
                if status != 2:
                    break
                pos = after
            out.append(sorted((k, bytes(memoryview(v)).hex() if not isinstance(v, int) else v)
                              for k, v in p.take().items()))
        return out

    lines = json.loads(sys.stdin.read())
    for text in lines:
        data = text.encode("latin-1")
        mm[PAGE - len(data):PAGE] = data
        with memoryview(mm)[PAGE - len(data):PAGE] as view:  # the line's last byte touches the guard page
            guarded = run(data, view)
        assert guarded == run(data, data), text
    del anchor
    print("ok", len(lines))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="mprotect through ctypes")
def test_the_scanner_reads_nothing_past_the_end_of_its_buffer():
    """Each line is fed ending exactly at an unreadable page: a read one byte past the buffer faults.

    A comma that ends the last line ("1," or "{0 1},", no line end after it) made the scanner look at
    the byte after the buffer before the fix (SIGSEGV here)."""
    lines = _lines()
    done = subprocess.run([sys.executable, "-c", _AT_PAGE_END], input=json.dumps(lines), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.split() == ["ok", str(len(lines))]


def test_trailing_comma_on_an_unterminated_last_line_is_an_error_on_both_engines():
    """The reader's view of the same lines as the guard-page test: the same error whichever engine."""
    for row in ("1,2,3,4,", "{0 1},", "{0 1,", "1,2,3,4 ,"):
        messages = []
        for engine in ("fast", "strict"):
            with pytest.raises(ArffFormatError) as info:
                arff.read_text(H_NUM + row, engine=engine, class_attribute=None)
            messages.append(str(info.value))
        assert messages[0] == messages[1] and ":7:" in messages[0]
