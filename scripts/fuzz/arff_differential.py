"""Differential fuzzer: the fast ARFF engine (C scanner) against the strict one.

Random headers and data sections (dense, sparse, quoted, escapes, nominal, string, dates, relational,
weights, comments, every line end, long lines), optionally mutated byte by byte, read with small
block sizes (block boundaries inside lines and inside \\r\\n pairs), and compared value by value
(bit patterns, -0.0 included), string tables, bags, weights, form and error text. Also feeds
random bytes straight into Parser.feed with random ranges and max_rows, and compares
parse_numbers (C) with parse_number (Python) bit for bit.

usage: python scripts/fuzz/arff_differential.py SECONDS SEED   (best under ASan: see scripts/fuzz/README.md)
"""
from __future__ import annotations

import array
import math
import os
import random
import struct
import sys
import tempfile
import time
import traceback

import numpy as np

from toolkit.data import arff, _arffscan
from toolkit.data.arff_source import ByteSource
from toolkit.data.arff_syntax import parse_number
from toolkit.errors import ToolkitError

WORDS = ["x", "y", "z z", "", "?", "a,b", "q'", 'd"', "%", "{", "}", "\\", "\u00e9", "\u00a0x", "\u4e2d",
         "NaN", "1", "0", "-0", "tab\tx", "nl\nx", "cr\rx", "\x01", "\x7f", "  ", "a b", "x\\y", "\u2028"]
NUMS = ["0", "1", "-1", "+1", "1.5", "-0", "-0.0", ".5", "5.", "1e5", "1E-5", "1e+5", "1e400", "-1e400",
        "1e-400", "NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "inf", "nan", "0x10", "1_0", "1d",
        "1.2.3", "--1", "+", "-", ".", "e5", "1e", "1e+", "\u0661", "123456789012345", "1234567890123456",
        "12345678901234567890", "0.1", "0.30000000000000004", "9007199254740993", "2.2250738585072011e-308",
        "4.9e-324", "1.7976931348623157e308", "1.7976931348623159e308", "00012", "1." + "0" * 30,
        "0." + "0" * 25 + "1", "1" * 25, "9" * 17 + ".5", "123.456e-7", "1e22", "1e23", "3e-22", "7e-23",
        "?", "'?'", "1e99999999999", "1e-99999999999", "0e99999999999", "18446744073709551616"]
CLEAN = [False]


def _valid_num(s):
    try:
        parse_number(s.strip("'"))
        return s != "'?'"
    except ValueError:
        return s == "?"


DATE_FORMATS = [None, "yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss.SSS", "dd/MM/yy HH:mm Z"]


VALID_NUMS = [n for n in NUMS if _valid_num(n)]


def q(s: str, rng: random.Random) -> str:
    """s quoted with escapes (sometimes with the other quote, sometimes with octal escapes)."""
    qc = rng.choice("''\"")
    out = []
    for ch in s:
        if ch in "\\'\"" and (ch == qc or ch == "\\" or rng.random() < 0.3):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append(rng.choice(["\\n", "\\012", "\\12"]))
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append(rng.choice(["\\t", "\t"]))
        elif ord(ch) < 32 or (ord(ch) < 256 and rng.random() < 0.1):
            out.append("\\%03o" % ord(ch) if rng.random() < 0.7 else "\\%o" % ord(ch))
        else:
            out.append(ch)
    return qc + "".join(out) + qc


def tok(s: str, rng: random.Random) -> str:
    """s as a token: bare when it can be, quoted otherwise (or at random)."""
    bare_ok = s and s != "?" and not any(c in s for c in " ,{}'\"%\\\t\n\r") and all(ord(c) > 32 for c in s)
    if bare_ok and rng.random() < 0.7:
        return s
    return q(s, rng)


def make_header(rng: random.Random, depth: int = 0):
    n = rng.randint(1 if depth else 0, 6 if not depth else 3)
    attrs = []
    lines = []
    for i in range(n):
        kind = rng.choice(["numeric", "numeric", "numeric", "nominal", "nominal", "string", "date"]
                          + (["relational"] if depth == 0 and rng.random() < 0.3 else []))
        name = f"a{depth}_{i}"
        if kind == "nominal":
            vals = list(dict.fromkeys(rng.sample(WORDS, rng.randint(1, 6))))
            attrs.append(("nominal", vals))
            lines.append(f"@attribute {name} {{{','.join(tok(v, rng) if v else q(v, rng) for v in vals)}}}")
        elif kind == "date":
            fmt = rng.choice(DATE_FORMATS)
            attrs.append(("date", fmt))
            lines.append(f"@attribute {name} date" + (f" '{fmt}'" if fmt else ""))
        elif kind == "relational":
            inner_lines, inner = make_header(rng, depth + 1)
            attrs.append(("relational", inner))
            lines.append(f"@attribute {name} relational")
            lines += inner_lines
            lines.append(f"@end {name}")
        else:
            attrs.append((kind, None))
            lines.append(f"@attribute {name} {kind}")
    return lines, attrs


def date_value(fmt, rng):
    y, mo, d = rng.randint(1900, 2099), rng.randint(1, 12), rng.randint(1, 28)
    h, mi, s, ms = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999)
    if fmt is None:
        return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}"
    if fmt == "yyyy-MM-dd":
        return f"{y:04d}-{mo:02d}-{d:02d}"
    if fmt == "yyyy-MM-dd HH:mm:ss.SSS":
        return f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{ms}"
    return f"{d:02d}/{mo:02d}/{y % 100:02d} {h:02d}:{mi:02d} " + rng.choice(["+0100", "UTC", "GMT-02:30", "Z"])


def value(kind, extra, rng, depth=0):
    r = rng.random()
    if r < 0.08:
        return "?"
    if kind == "numeric":
        if r < 0.5:
            v = rng.choice([rng.randint(-1000, 1000), rng.uniform(-1e6, 1e6), rng.gauss(0, 1),
                            rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 308), 0])
            s = rng.choice([repr(float(v)), str(v), "%.15g" % v, "%.17g" % v, "%e" % v, "%.3f" % v])
        else:
            s = rng.choice(VALID_NUMS if CLEAN[0] else NUMS)
        return s if rng.random() < 0.85 or s in ("?", "'?'") else q(rng.choice([s, " " + s + "\t"]), rng)
    if kind == "nominal":
        v = rng.choice(extra) if (CLEAN[0] or rng.random() < 0.93) else rng.choice(WORDS)
        return tok(v, rng) if v else q(v, rng)
    if kind == "string":
        v = rng.choice(WORDS + [f"s{rng.randint(0, 20)}", "x" * rng.randint(0, 3000)])
        return tok(v, rng) if v else q(v, rng)
    if kind == "date":
        v = date_value(extra, rng) if (CLEAN[0] or rng.random() < 0.9) else rng.choice(["2001-13-01", "junk", "2001-01-01"])
        return q(v, rng) if (" " in v or rng.random() < 0.3) else v
    # relational: a bag of rows of the inner relation, as one quoted value
    rows = [dense_row(extra, rng, depth + 1, weights=False) for _ in range(rng.randint(0, 3))]
    return q("\n".join(rows), rng)


def sep(rng):
    return rng.choice([",", ",", ",", ", ", " ", "\t", " ,\t", " , "])


def dense_row(attrs, rng, depth=0, weights=True):
    vals = [value(k, e, rng, depth) for k, e in attrs]
    out = ""
    for i, v in enumerate(vals):
        out += v
        if i < len(vals) - 1:
            out += sep(rng)
    if weights and rng.random() < 0.1:
        out += rng.choice([",", " ", ""]) + "{" + rng.choice(["2", "0.5", "0", "'3'", "1", "1e-400"] + ([] if CLEAN[0] else ["-1", "NaN", "1e400", "?"])) + "}"
    return out


def sparse_row(attrs, rng, depth=0):
    n = len(attrs)
    idx = list(range(n))
    rng.shuffle(idx)
    idx = idx[: rng.randint(0, n)]
    if rng.random() < 0.5:
        idx.sort()
    pairs = []
    for i in idx:
        index = str(i) if (CLEAN[0] or rng.random() < 0.95) else rng.choice([f"+{i}", f"00{i}", str(n), "-1", "1_0", "99999999999999999999"])
        pairs.append(index + rng.choice([" ", "  ", "\t", ",", " , "]) + value(attrs[i][0], attrs[i][1], rng, depth))
    out = "{" + rng.choice(["", " "]) + rng.choice([",", ", ", " ", "\t"]).join(pairs) + rng.choice(["", " "]) + "}"
    if rng.random() < 0.1:
        out += rng.choice([",", " ", ""]) + "{" + rng.choice(["2", "0.5", "0"] + ([] if CLEAN[0] else ["-1", "NaN"])) + "}"
    return out


def make_text(rng: random.Random) -> tuple[str, object]:
    lines, attrs = make_header(rng)
    head = "@relation r\n" + "\n".join(lines) + "\n@data\n"
    n_rows = rng.choice([0, 1, 3, 10, 40, 200])
    sparse_p = rng.choice([0.0, 1.0, 0.5, 0.05])
    rows = []
    for _ in range(n_rows):
        r = rng.random()
        if r < 0.04:
            rows.append(rng.choice(["", "   ", "% comment", "\t% c"] + ([] if CLEAN[0] else ["\x00"])))
        elif rng.random() < sparse_p:
            rows.append(sparse_row(attrs, rng))
        else:
            rows.append(dense_row(attrs, rng))
        if rng.random() < 0.05:
            rows[-1] += rng.choice([" % trailing", "%c", "\t"])
    if rng.random() < 0.03 and attrs:  # a long line
        rows.append(",".join(value(k, e, rng) for k, e in attrs) if rng.random() < 0.5
                    else "{" + ",".join(f"{i} 1" for i in range(len(attrs) - 1, -1, -1)) + "}")
    nl = rng.choice(["\n", "\n", "\r\n", "\r"])
    body = nl.join(rows) + (nl if rng.random() < 0.85 else "")
    text = head.replace("\n", nl) + body
    n = len(attrs)
    ci = rng.choice([-1, -1, None] + list(range(n)))
    return text, ci


def mutate(text: str, rng: random.Random) -> str:
    alphabet = list("{}',\"%?@\\ \n\t\r0123456789abcxyz-+.eE") + ["{0 ", "\x00", "\u00a0", "_", "\u0661", "NaN",
                                                                  "Infinity", "1e400", ",{", "\r\n", "\\'", "\udcff",
                                                                  "\u00e9", "\\351"]
    chars = list(text)
    start = text.find("@data")
    start = start + 6 if start >= 0 and rng.random() < 0.9 else 0
    for _ in range(rng.randint(1, 6)):
        if len(chars) <= start:
            break
        pos = rng.randrange(start, len(chars) + 1)
        op = rng.randrange(4)
        if op == 0 and pos < len(chars):
            del chars[pos]
        elif op == 1:
            chars.insert(pos, rng.choice(alphabet))
        elif op == 2 and pos < len(chars):
            chars[pos] = rng.choice(alphabet)
        elif op == 3 and pos < len(chars):  # duplicate a span
            j = rng.randrange(pos, min(len(chars), pos + 40) + 1)
            chars[pos:pos] = chars[pos:j]
    return "".join(chars)


LAST = {}


class _Recording(arff.FastBuilder):
    def take(self):
        LAST["declined"] = self.declined
        return super().take()


arff.FastBuilder = _Recording


def read(text, engine, ci, block):
    src = ByteSource(text=text, display_name="<f>", block=block)
    try:
        return arff._read_source(src, ci, "auto", engine)
    except ToolkitError as exc:
        return exc


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = a.view(np.int64).copy()
    b[np.isnan(a)] = 0x7FF8000000000000  # NaN payloads and signs are not compared
    return b


def same(fast, strict) -> str | None:
    if isinstance(fast, Exception) or isinstance(strict, Exception):
        if type(fast) is not type(strict) or str(fast) != str(strict):
            return f"errors differ:\n fast:   {fast!r}\n strict: {strict!r}"
        return None
    d = fast.difference(strict)
    if d:
        return "difference: " + d
    if fast.is_sparse != strict.is_sparse:
        return "form differs"
    if fast.is_sparse:
        a, b = fast.X.tocsr(), strict.X.tocsr()
        a.sort_indices()
        b.sort_indices()
        if not a.has_sorted_indices:
            return "fast CSR indices not sorted"
        if not (np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
                and np.array_equal(bits(a.data), bits(b.data))):
            return "CSR structure or bits differ"
        if not np.array_equal(fast.X.indptr, a.indptr) or not np.array_equal(fast.X.indices, a.indices):
            return "fast CSR was not in canonical order"
    else:
        if not np.array_equal(bits(fast.X), bits(strict.X)):
            return "dense bits differ"
    if (fast.y is None) != (strict.y is None):
        return "y presence differs"
    if fast.y is not None and not np.array_equal(bits(np.asarray(fast.y, float)), bits(np.asarray(strict.y, float))):
        return "y bits differ"
    if not np.array_equal(bits(fast.weights), bits(strict.weights)):
        return "weights differ"
    if fast.strings != strict.strings:
        return f"string tables differ {fast.strings!r} {strict.strings!r}"
    return None


def _compare_parts(whole, parts, what):
    """Each part equals its rows of the whole file (decoded strings and bags: each part has its own
    tables, which start with the file's first values), and so do the parts concatenated."""
    at = 0
    for k, p in enumerate(parts):
        d = whole.subset(np.arange(at, at + p.n_instances)).difference(p)
        if d:
            return f"{what}: part {k} (rows {at}..{at + p.n_instances}): {d}"
        at += p.n_instances
    if at != whole.n_instances:
        return f"{what}: {at} rows != {whole.n_instances}"
    joined = parts[0]
    for p in parts[1:]:
        joined = joined.concat(p)
    d = whole.difference(joined)
    if d:
        return f"{what}: the parts concatenated: {d}"
    if joined.strings != whole.strings:
        return f"{what}: the parts concatenated have other string tables"
    return None


def pieces(text, ci, whole, rng):
    """iter_chunks with small chunks and read_range with random cuts give the whole file back."""
    if "\x00" in text:
        return None  # the NUL check looks at the first block only, which read_text's small blocks shift
    fd, path = tempfile.mkstemp(suffix=".arff", dir="/tmp/arffscan_review/tmp")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    try:
        rows = rng.choice([1, 2, 3, 7])
        parts = list(arff.iter_chunks(path, rows=rows, class_attribute=ci))
        if any(p.n_instances != rows for p in parts[:-1]):
            return "iter_chunks chunk sizes"
        d = _compare_parts(whole, parts, f"iter_chunks rows={rows}")
        if d:
            return d
        size = os.path.getsize(path)
        cuts = [0] + sorted(rng.sample(range(1, size), min(size - 1, rng.randint(1, 6)))) + [size] if size > 1 else [0, size]
        parts = [arff.read_range(path, a, b, class_attribute=ci) for a, b in zip(cuts[:-1], cuts[1:])]
        return _compare_parts(whole, parts, f"read_range {cuts}")
    except ToolkitError as exc:
        return f"pieces raised {exc!r}"
    finally:
        os.unlink(path)


def raw_feed(rng: random.Random):
    """Random bytes straight into the parser API: only memory safety is checked."""
    kinds = bytes(rng.choice([0, 0, 1, 2, 3]) for _ in range(rng.randint(0, 5)))
    nominal = [[b"x", b"y", b""] if k == 1 else None for k in kinds]
    strings = [({}, []) if k == 2 else None for k in kinds]
    conv = [(lambda s: float(len(s))) if k == 3 else None for k in kinds]
    ci = rng.randint(-1, len(kinds) - 1)
    p = _arffscan.Parser(kinds, nominal, strings, conv, ci, rng.choice([-1, 0, 1]))
    alphabet = b"{}',\"%?\\ \n\t\r\x000123456789xy-+.eE"
    for _ in range(rng.randint(1, 5)):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        form = rng.randrange(4)  # bytes and bytearray end in a NUL; array and numpy memory ends exactly
        data = [data, bytearray(data), array.array("B", data), np.frombuffer(data, np.uint8).copy()][form]
        start = rng.randint(0, len(data))
        end = rng.randint(start, len(data))
        pos, line = start, 1
        for _ in range(50):
            try:
                status, pos, line, line_end, after = p.feed(data, pos, end, line, rng.choice([0, 0, 1, 2]), rng.random() < 0.7)
            except (ValueError, TypeError):
                break
            assert start <= pos <= end and pos <= line_end <= after <= end, (status, pos, line_end, after)
            if status == 0:
                break
            if status == 2:
                if rng.random() < 0.5:
                    try:
                        if rng.random() < 0.5:
                            p.add_dense([float(rng.randint(0, 3)) for _ in kinds], 1.0)
                        else:
                            p.add_sparse([(i, 1.0) for i in range(len(kinds)) if rng.random() < 0.5], 2.0)
                    except (ValueError, IndexError):
                        pass
                pos = after
        if rng.random() < 0.4:
            d = p.take()
            n = d["n_rows"]
            assert len(memoryview(d["y"])) == 8 * n and len(memoryview(d["w"])) == 8 * n
            if d["sparse"] == 1:
                ip = np.frombuffer(d["indptr"], np.int64)
                ind = np.frombuffer(d["indices"], np.int32)
                assert len(ip) == n + 1 and ip[0] == 0 and ip[-1] == len(ind) and np.all(np.diff(ip) >= 0)
                assert len(memoryview(d["data"])) == 8 * len(ind)
                nf = len(kinds) - (ci >= 0)
                assert np.all((ind >= 0) & (ind < max(nf, 1)))
                for r in range(n):
                    seg = ind[ip[r]:ip[r + 1]]
                    assert np.all(np.diff(seg) > 0), seg
            else:
                nf = len(kinds) - (ci >= 0)
                assert len(memoryview(d["X"])) == 8 * n * nf, (len(memoryview(d["X"])), n, nf)


def numbers(rng: random.Random):
    texts = []
    for _ in range(50):
        s = rng.choice(NUMS)
        if rng.random() < 0.5:
            s = "".join(rng.choice("0123456789.eE+-") for _ in range(rng.randint(1, 25)))
        if rng.random() < 0.2:
            s = rng.choice([" ", "\t", "\x00", ""]) + s + rng.choice([" ", "\n", ""])
        if rng.random() < 0.1:
            d = rng.randint(1, 40)
            s = rng.choice(["", "-"]) + "".join(rng.choice("0123456789") for _ in range(d)) + \
                rng.choice(["", "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 30)))]) + \
                rng.choice(["", f"e{rng.randint(-400, 400)}"])
        texts.append(s)
    vals, ok = _arffscan.parse_numbers(texts)
    vals = struct.unpack(f"{len(texts)}d", vals)
    for s, v, k in zip(texts, vals, ok):
        try:
            ref = parse_number(s)
        except ValueError:
            ref = None
        if ref is None:
            assert not k, (s, v)
        else:
            assert k, (s, ref)
            assert (math.isnan(ref) and math.isnan(v)) or struct.pack("d", ref) == struct.pack("d", v), (s, ref, v)


def main():
    seconds, seed = float(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    t0 = time.time()
    stats = {"texts": 0, "mutated": 0, "ok_both": 0, "err_both": 0, "raw": 0, "numbers": 0, "declined_valid": 0}
    failures = 0
    while time.time() - t0 < seconds:
        case_seed = rng.randrange(2**63)
        crng = random.Random(case_seed)
        kind = crng.random()
        try:
            if kind < 0.1:
                raw_feed(crng)
                stats["raw"] += 1
                continue
            if kind < 0.15:
                numbers(crng)
                stats["numbers"] += 1
                continue
            CLEAN[0] = crng.random() < 0.5
            text, ci = make_text(crng)
            if not CLEAN[0] and crng.random() < 0.6:
                text = mutate(text, crng)
                stats["mutated"] += 1
            stats["texts"] += 1
            block = crng.choice([1 << 20, 1, 2, 3, 7, 16, 64, 100, 1000])
            LAST.clear()
            fast = read(text, "fast", ci, block)
            strict = read(text, "strict", ci, block)
            problem = same(fast, strict)
            if problem is None and not isinstance(fast, Exception):
                stats["ok_both"] += 1
                if LAST.get("declined") and "relational" not in text:
                    stats["declined_valid"] += 1
                    if stats["declined_valid"] <= 5:
                        print("declined a valid line:", repr(text[-300:]), flush=True)
            elif problem is None:
                stats["err_both"] += 1
            if problem is None and not isinstance(fast, Exception) and crng.random() < 0.25:
                problem = pieces(text, ci, fast, crng)
                stats["pieces"] = stats.get("pieces", 0) + 1
            if problem:
                failures += 1
                with open(f"/tmp/arffscan_review/fail_{seed}_{case_seed}.arff", "w", newline="", encoding="utf-8", errors="surrogatepass") as fh:
                    fh.write(text)
                print(f"FAIL seed={case_seed} ci={ci} block={block}: {problem}", flush=True)
        except Exception:
            failures += 1
            print(f"CRASH case_seed={case_seed}", flush=True)
            traceback.print_exc()
    print("done", stats, "failures", failures, "seconds", round(time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
