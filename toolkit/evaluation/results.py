"""Result records and their JSON-lines file.

The first line of a results file states its experiment (:mod:`toolkit.evaluation.experiment`); then
one record per (dataset, pipeline, repetition), appended and flushed to disk as soon as it is
finished, so an interrupted run loses nothing and ``--resume`` skips what is done. Only one process
writes a file at a time (an advisory lock, held while the run lasts). Records are written with sorted
keys; everything that differs between two runs with the same seed (timings, dates) lives under
``"timing"`` (and the experiment's ``created_utc``), so two runs give identical files apart from it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.errors import ResultsFileError
from toolkit.evaluation import experiment as exp
from toolkit.json_limits import parse_cost_problem

__all__ = ["RECORD_SCHEMA", "record_key", "ResultsWriter", "read_records", "read_file", "Results", "dumps_record"]

RECORD_SCHEMA = "toolkit.result/1"


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None; numpy scalars become Python numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        return _clean(value.item())
    if hasattr(value, "tolist"):
        return _clean(value.tolist())
    return value


def dumps_record(record: dict[str, Any]) -> str:
    return json.dumps(_clean(record), sort_keys=True, separators=(",", ":"), allow_nan=False)


def record_key(dataset_sha: str, pipeline: dict[str, Any], protocol: dict[str, Any], repetition: int) -> str:
    """A stable identifier of one unit of work."""
    blob = json.dumps([dataset_sha, pipeline, protocol, repetition], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


#: the longest line of a results file read: a record with --save-proba of 100,000 test instances and 20
#: classes takes about 80 MB; a longer line is no record of this toolkit (and would be held whole)
MAX_RECORD_CHARS = 256 << 20


def read_file(path: str | os.PathLike[str], torn: list[str] | None = None, lines: list[int] | None = None
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(experiment records, result records) of a results file; a torn last line (a killed run) is ignored,
    and the file's name added to ``torn`` when given; ``lines`` gets each result record's line number."""
    path = Path(path)
    if not path.exists():
        raise ResultsFileError(f"{path}: no such results file")
    if path.is_dir():
        raise ResultsFileError(f"{path}: is a folder, not a results file")
    experiments: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            # line by line, each at most MAX_RECORD_CHARS: a file is not held whole, nor a line without end
            for number, line in enumerate(iter(lambda: fh.readline(MAX_RECORD_CHARS + 1), ""), 1):
                if len(line) > MAX_RECORD_CHARS:
                    raise ResultsFileError(f"{path}:{number}: a line of more than {MAX_RECORD_CHARS:,} characters; "
                                           f"the toolkit's records are far shorter (is this a toolkit results file?)")
                text = line.strip()
                if not text:
                    continue
                record = _parse_line(path, number, line, text, torn)
                if record is None:
                    break
                schema = record.get("schema") if isinstance(record, dict) else None
                if schema == exp.EXPERIMENT_SCHEMA:
                    problem = _statement_problem(record)
                    if problem:
                        raise ResultsFileError(f"{path}:{number}: a damaged experiment statement: {problem}")
                    experiments.append(record)
                elif schema == RECORD_SCHEMA:
                    problem = _record_problem(record)
                    if problem:
                        raise ResultsFileError(f"{path}:{number}: a damaged {RECORD_SCHEMA} record: {problem}")
                    records.append(record)
                    if lines is not None:
                        lines.append(number)
                else:
                    raise ResultsFileError(f"{path}:{number}: not a {RECORD_SCHEMA} record")
    except UnicodeDecodeError:
        raise ResultsFileError(f"{path}: not a text file; is this a toolkit results file?") from None
    return experiments, records


def _parse_line(path: Path, number: int, line: str, text: str, torn: list[str] | None) -> Any:
    """One line's JSON; None for a torn last line (a killed run), which then ends the file."""
    problem = parse_cost_problem(text)
    if problem:
        raise ResultsFileError(f"{path}:{number}: {problem}; the toolkit's records are far cheaper (is this a "
                               f"toolkit results file?)")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        # a line our writer began (every one starts '{"') and a killed run did not finish (only the last
        # line of a file can lack its newline); any other text is not ours, and --resume would cut it away
        if not line.endswith("\n") and text[:2] in ("{", '{"'):
            if torn is not None:
                torn.append(str(path))
            return None
        raise ResultsFileError(f"{path}:{number}: not a JSON record ('{text[:40]}...'); "
                               f"is this a toolkit results file?") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


#: metrics whose value is a share, a correlation or a count: a number in range, or missing (None, NaN)
_BOUNDED = {"error": (0.0, 1.0), "accuracy": (0.0, 1.0), "roc-auc": (0.0, 1.0), "average-precision": (0.0, 1.0),
            "kappa": (-1.0, 1.0), "mcc": (-1.0, 1.0)}
_COUNTS = ("errors", "n_evaluated")
#: any metric's magnitude at most: the statistics square the values (1e200 overflowed the t-test's variance)
_LARGEST_METRIC = 1e100


def _statement_problem(rec: dict[str, Any]) -> str:
    """What makes an experiment statement unreadable (empty: nothing): the fields compare, report and
    --resume read, of the types the toolkit writes them in."""
    if not isinstance(rec.get("protocol"), dict):
        return "'protocol' must be an object"
    datasets = rec.get("datasets", [])
    if not isinstance(datasets, list) or not all(
            isinstance(d, dict) and isinstance(d.get("name"), str) and isinstance(d.get("sha256"), str)
            and isinstance(d.get("class", ""), (str, type(None))) for d in datasets):
        return "'datasets' must be a list of objects with a name and a sha256"
    if not _strings(rec.get("pipelines", [])):
        return "'pipelines' must be a list of names"
    if not _strings(rec.get("metrics", [])):
        return "'metrics' must be a list of names"
    for key in ("versions", "pipeline_specs", "timing"):
        if key in rec and not isinstance(rec[key], dict):
            return f"'{key}' must be an object"
    if isinstance(rec.get("versions"), dict) and not isinstance(rec["versions"].get("plugins", {}), dict):
        return "'versions.plugins' must be an object"
    return ""


def _list_lengths(value: Any) -> set[int] | None:
    """The lengths of a list of lists (None: not a list of lists)."""
    if not isinstance(value, list) or not all(isinstance(v, list) for v in value):
        return None
    return set(map(len, value))


def _record_problem(rec: dict[str, Any]) -> str:
    """What makes a result record unreadable (empty: nothing)."""
    ds = rec.get("dataset")
    if not (isinstance(ds, dict) and isinstance(ds.get("name"), str) and isinstance(ds.get("sha256", ""), (str, type(None)))):
        return "'dataset' must be an object with a name"
    if "classes" in ds and not _strings(ds["classes"]):
        return "'dataset.classes' must be a list of labels"
    if not (isinstance(rec.get("pipeline"), dict) and isinstance(rec["pipeline"].get("name"), str)):
        return "'pipeline' must be an object with a name"
    for step, spec in rec["pipeline"].items():
        if isinstance(spec, dict) and not (isinstance(spec.get("name"), str) and isinstance(spec.get("params", {}), dict)
                                           and isinstance(spec.get("grid", {}), dict)):
            return f"'pipeline.{step}' must be an object with a name, 'params' and 'grid' objects"
    env = rec.get("env", {})
    if not (isinstance(env, dict) and isinstance(env.get("plugins", {}), dict)):
        return "'env' must be an object (its 'plugins' an object)"
    repetition = rec.get("repetition")
    if not (isinstance(repetition, int) and not isinstance(repetition, bool) and repetition >= 0):
        return f"'repetition' must be a whole number >= 0, not {repetition!r}"
    if rec.get("status", "ok") not in ("ok", "failed"):
        return f"'status' must be 'ok' or 'failed', not {rec.get('status')!r}"
    if not isinstance(rec.get("key"), str):
        return "'key' must be the record's identity (a string)"
    if not isinstance(rec.get("protocol"), dict):
        return "'protocol' must be an object"
    for count in ("n_test", "n_train"):
        value = rec.get(count)
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return f"'{count}' must be a whole number >= 0, not {value!r}"
    for key, kind in (("protocol", dict), ("chosen_params", dict), ("timing", dict), ("tuning", list),
                      ("predictions", dict), ("extra", dict)):
        if key in rec and not isinstance(rec[key], kind):
            return f"'{key}' must be {'an object' if kind is dict else 'a list'}"
    metrics = rec.get("metrics", {} if rec.get("status") == "failed" else None)
    if not isinstance(metrics, dict):
        return "'metrics' must be an object"
    for name, value in metrics.items():
        if not (value is None or _is_number(value) or isinstance(value, (list, dict))):
            return f"metric '{name}' must be a number, not {value!r}"
        if _is_number(value) and value == value:   # NaN: a metric the repetition could not compute
            if not abs(value) <= _LARGEST_METRIC:    # the writer never writes an infinity
                return f"metric '{name}' must be a finite number of magnitude at most 1e100, not {value!r}"
            if name in _BOUNDED and not _BOUNDED[name][0] <= value <= _BOUNDED[name][1]:
                lo, hi = _BOUNDED[name]
                return f"metric '{name}' must be in [{lo:g}, {hi:g}], not {value!r}"
            if name in _COUNTS and value < 0:
                return f"metric '{name}' must be a count, not {value!r}"
    predictions = rec.get("predictions")
    if isinstance(predictions, dict):
        lengths = {k: len(v) for k, v in predictions.items() if isinstance(v, list)}
        if any(not isinstance(predictions.get(k, []), list) for k in ("test_index", "y_true", "y_pred")):
            return "'predictions' must hold lists"
        if len(set(lengths.values())) > 1:
            return f"'predictions' lists of different lengths ({', '.join(f'{k} {n}' for k, n in lengths.items())})"
    n_classes = _n_classes(ds)
    if isinstance(predictions, dict):
        for key in ("y_true", "y_pred"):
            codes = predictions.get(key, [])
            if not set(map(type, codes)) <= {int}:   # (bool is not int here; map and set run in C)
                return f"'predictions.{key}' must hold class codes (whole numbers)"
            if codes and (min(codes) < -1 or (n_classes is not None and max(codes) >= n_classes)):
                bad = next(c for c in codes if c < -1 or (n_classes is not None and c >= n_classes))
                return (f"'predictions.{key}' holds class code {bad}, outside -1 (missing) to "
                        f"{'the classes' if n_classes is None else n_classes - 1}")
    if n_classes is not None:
        # per-class numbers, one per class of the dataset (reports index them by class)
        if isinstance(predictions, dict):
            for key in ("proba", "scores"):
                if key in predictions and _list_lengths(predictions[key]) not in (set(), {n_classes}):
                    return f"'predictions.{key}' must hold one list of {n_classes} numbers per test instance"
        counts = rec.get("train_class_counts")
        if counts is not None and not (isinstance(counts, list) and len(counts) == n_classes
                                       and all(_is_number(c) for c in counts)):
            return f"'train_class_counts' must be {n_classes} numbers (the dataset's classes)"
        per_class = metrics.get("per-class")
        if isinstance(per_class, dict) and any(isinstance(v, list) and len(v) != n_classes for v in per_class.values()):
            return f"metric 'per-class' must hold lists of {n_classes} values (the dataset's classes)"
    for name in ("pr-curve", "roc-curve"):
        curves = metrics.get(name)
        if isinstance(curves, dict):
            for label, curve in curves.items():
                lists = [v for v in curve.values() if isinstance(v, list)] if isinstance(curve, dict) else None
                if lists is None or len({len(v) for v in lists}) > 1:
                    return f"metric '{name}' of class '{label}' must be an object of lists of one length"
    matrix = metrics.get("confusion-matrix")
    if isinstance(matrix, dict) and "matrix" in matrix and n_classes is not None:
        rows = matrix["matrix"]
        if not (isinstance(rows, list) and len(rows) == n_classes and all(
                isinstance(row, list) and len(row) == n_classes and all(_is_number(v) for v in row) for row in rows)):
            return f"metric 'confusion-matrix' must be {n_classes} x {n_classes} numbers (the dataset's classes)"
    return ""


def _n_classes(ds: dict[str, Any]) -> int | None:
    """A record's number of classes, when it says."""
    if isinstance(ds.get("classes"), list):
        return len(ds["classes"])
    n = ds.get("n_classes")
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete result record of a results file (the experiment statement left out)."""
    return read_file(path)[1]


def file_experiment(path: str | os.PathLike[str], experiments: list[dict[str, Any]],
                    records: list[dict[str, Any]], lines: Sequence[int] | None = None) -> dict[str, Any] | None:
    """The experiment a file holds: its statement, or (files of toolkit 0.1) what its first record says;
    a file whose records belong to more than one experiment is refused, naming the line of ``lines``
    (each record's, from :func:`read_file`) that does not belong."""
    for later in experiments[1:]:   # a resumed run's extension states the same experiment
        changed = exp.differences(experiments[0], later)
        if changed:
            raise ResultsFileError(f"{path} holds more than one experiment ({changed[0]}); results files of "
                                   f"this toolkit hold one experiment each (were two files joined?)")
    merged = exp.merge(experiments) if experiments else exp.from_records(records)
    if merged is not None:
        _check_records_belong(path, merged, records, lines, stated=bool(experiments))
    return merged


def _check_records_belong(path: str | os.PathLike[str], experiment: dict[str, Any],
                          records: list[dict[str, Any]], lines: Sequence[int] | None, stated: bool = True) -> None:
    """Every record of a file ran under its experiment's protocol, on the datasets it states; with a
    statement, also of a pipeline it states, a repetition within its runs, and one identity per (dataset,
    pipeline, repetition): records joined from another file were pooled into its cells."""
    want = json.dumps(experiment.get("protocol"), sort_keys=True)
    known = {d["name"]: d["sha256"] for d in experiment.get("datasets", [])}
    pipelines = set(experiment.get("pipelines", []))
    runs = (experiment.get("protocol") or {}).get("repetitions")
    seen: dict[tuple[Any, ...], tuple[str, str]] = {}

    def where(i: int) -> str:   # the line, which an editor shows; the record's count without the lines
        return f"line {lines[i]}" if lines is not None else f"record {i + 1}"

    for i, r in enumerate(records):
        if "protocol" in r and json.dumps(r["protocol"], sort_keys=True) != want:
            changed = exp.differences(experiment, r)
            what = changed[0] if changed else "another protocol"
            raise ResultsFileError(f"{path}: {where(i)} ran under another protocol than the file's experiment "
                                   f"({what}); results files of this toolkit hold one experiment each")
        ds = r.get("dataset") or {}
        if ds.get("name") in known and ds.get("sha256") and ds["sha256"] != known[ds["name"]]:
            raise ResultsFileError(f"{path}: {where(i)} is of another dataset '{ds['name']}' than the file's "
                                   f"experiment states (sha256 {ds['sha256'][:12]}...)")
        if stated:
            name, pipe, rep = ds.get("name"), r["pipeline"]["name"], r["repetition"]
            if known and name not in known:
                raise ResultsFileError(f"{path}: {where(i)} is of dataset '{name}', which the file's experiment "
                                       f"does not state (were two files joined?)")
            if pipelines and pipe not in pipelines:
                raise ResultsFileError(f"{path}: {where(i)} is of pipeline '{pipe}', which the file's experiment "
                                       f"does not state (were two files joined?)")
            if isinstance(runs, int) and not isinstance(runs, bool) and rep >= runs:
                raise ResultsFileError(f"{path}: {where(i)} is repetition {rep}, past the experiment's {runs} runs")
            first = seen.setdefault((name, pipe, rep), (where(i), r["key"]))
            if first[1] != r["key"]:
                raise ResultsFileError(f"{path}: {first[0]} and {where(i)} are both dataset '{name}', "
                                       f"pipeline '{pipe}', repetition {rep} under two identities (were two files "
                                       f"joined?)")


class ResultsWriter:
    """Appends records to a JSON-lines file, each written to the file (flushed) before the next task runs,
    so a killed run loses nothing; the file is synced to the disk at most once per ``sync_interval``
    seconds and when it is closed (a sync per record cost 4 ms, serial time for a run of quick tasks),
    so a power loss may lose the last second's records, which ``--resume`` redoes.

    The file is locked for the writer's lifetime: a second writer fails at once. A new file starts with
    the experiment statement; ``resume`` continues a file only for the same experiment (a different
    protocol, seed, runs, fractions, metrics or versions is refused naming the difference) and records
    the datasets and pipelines a resumed run adds (``notes`` says what was added and skipped).
    """

    def __init__(self, path: str | os.PathLike[str] | None, resume: bool = False,
                 experiment: dict[str, Any] | None = None, sync_interval: float = 1.0):
        self.path = Path(path) if path is not None else None
        self.sync_interval = sync_interval
        self._synced = 0.0
        self.done: set[str] = set()
        self.previous: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.experiment = experiment
        #: the experiment the file holds once opened: on --resume the first run's statement (its start time)
        #: with what this run adds, which is what ``compare`` of the file reports
        self.file_experiment: dict[str, Any] | None = experiment
        self._fh: Any = None
        if self.path is None:
            return
        if self.path.is_dir():
            raise ResultsFileError(f"{self.path}: is a folder; --out names the results file to write")
        if not self.path.parent.is_dir():
            raise ResultsFileError(f"{self.path}: the folder {self.path.parent} does not exist")
        try:
            fh = open(self.path, "a+", encoding="utf-8")
        except OSError as exc:
            raise ResultsFileError(f"{self.path}: cannot write ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise ResultsFileError(f"{self.path} is being written by another toolkit process; wait for it to "
                                   f"finish or choose another --out file") from None
        try:
            self._open(fh, resume)
        except BaseException as exc:
            try:
                fh.close()
            except OSError:   # the statement's text that could not be flushed
                pass
            if isinstance(exc, OSError):   # a full disk as the statement is written
                raise self._cannot_write(exc) from None
            raise
        self._fh = fh

    def _open(self, fh: Any, resume: bool) -> None:
        assert self.path is not None
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            if self.experiment is not None:
                self._write_line(fh, self.experiment)
            return
        if not resume:
            raise ResultsFileError(f"{self.path} already exists; pass --resume to continue it, "
                                   f"or choose another --out file")
        lines: list[int] = []
        experiments, self.previous = read_file(self.path, lines=lines)   # refuses a file that is not a results file
        if self._repair_tail(fh):   # a torn last line was cut: read what is left (a cut record is redone)
            lines = []
            experiments, self.previous = read_file(self.path, lines=lines)
        self.done = {r["key"] for r in self.previous if r.get("status") == "ok"}
        if self.experiment is None:
            return
        old = file_experiment(self.path, experiments, self.previous, lines)
        if old is None:  # a file with nothing in it yet but a torn line
            self._write_line(fh, self.experiment)
            return
        changed = exp.differences(old, self.experiment)
        if changed:
            more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
            raise ResultsFileError(f"{self.path} holds another experiment: {changed[0]}{more}; --resume continues "
                                   f"the same experiment only, so write to another --out file")
        added = exp.additions(old, self.experiment)
        self.file_experiment = old
        if added["datasets"] or added["pipelines"]:
            extension = {**self.experiment, "kind": "extension", "datasets": added["datasets"],
                         "pipelines": added["pipelines"]}
            self._write_line(fh, extension)
            self.file_experiment = exp.merge([old, extension])
            what = [f"dataset {d['name']}" for d in added["datasets"]] + [f"pipeline {p}" for p in added["pipelines"]]
            self.notes.append(f"{self.path}: this run adds {', '.join(what)} to the experiment")

    @staticmethod
    def _repair_tail(fh: Any, block: int = 1 << 16) -> bool:
        """Drop a torn last line (a run killed in mid-write) so that the next record starts on a line of
        its own; True when something was cut. Reads back from the end only as far as the last newline.
        Called once the file has been read as a results file: a file given by mistake is left alone."""
        fh.flush()
        with open(fh.fileno(), "rb+", closefd=False) as raw:
            end = raw.seek(0, os.SEEK_END)
            if end == 0:
                return False
            raw.seek(end - 1)
            if raw.read(1) == b"\n":
                fh.seek(0, os.SEEK_END)
                return False
            cut, stop = 0, end
            while stop > 0:
                start = max(0, stop - block)
                raw.seek(start)
                newline = raw.read(stop - start).rfind(b"\n")
                if newline >= 0:
                    cut = start + newline + 1
                    break
                stop = start
            raw.truncate(cut)
        fh.seek(0, os.SEEK_END)
        return True

    @staticmethod
    def _write_line(fh: Any, record: dict[str, Any]) -> None:
        fh.write(dumps_record(record) + "\n")
        fh.flush()
        os.fsync(fh.fileno())

    def write(self, record: dict[str, Any]) -> None:
        if self._fh is None:
            return
        try:
            self._fh.write(dumps_record(record) + "\n")
            self._fh.flush()
            now = time.monotonic()
            if now - self._synced >= self.sync_interval:
                os.fsync(self._fh.fileno())
                self._synced = now
        except OSError as exc:   # a full disk: the records written so far stay, --resume continues them
            raise self._cannot_write(exc) from None

    def _cannot_write(self, exc: OSError) -> ResultsFileError:
        return ResultsFileError(f"{self.path}: cannot write ({exc.strerror or exc}); the records written so "
                                f"far are kept: free space, then continue with --resume")

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as exc:
                raise self._cannot_write(exc) from None
            finally:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
                finally:
                    try:
                        fh.close()
                    except OSError:   # the buffered text that could not be flushed above
                        pass

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class Results:
    """The records of one or more runs, with summaries for reports."""

    records: list[dict[str, Any]] = field(default_factory=list)
    experiment: dict[str, Any] | None = None
    #: files whose last line was cut off (a run killed while writing it)
    torn: list[str] = field(default_factory=list)
    #: the files read (from_files), which a report names
    sources: list[str] = field(default_factory=list)

    @classmethod
    def from_files(cls, paths: Iterable[str | os.PathLike[str]]) -> Results:
        """The records of one experiment, from one or several files; files of different experiments are
        refused (compare them one at a time), naming the difference."""
        records: list[dict[str, Any]] = []
        merged: dict[str, Any] | None = None
        first = None
        torn: list[str] = []
        paths = list(paths)
        for p in paths:
            lines: list[int] = []
            experiments, recs = read_file(p, torn, lines)
            this = file_experiment(p, experiments, recs, lines)
            if this is not None:
                if merged is None:
                    merged, first = this, p
                else:
                    changed = exp.differences(merged, this)
                    if changed:
                        raise ResultsFileError(f"{first} and {p} hold different experiments ({changed[0]}); their "
                                               f"records cannot be pooled: compare them separately")
                    merged = exp.merge([merged, {**this, "kind": "extension"}])
            records.extend(recs)
        return cls(latest_records(records), merged, torn, [os.fspath(p) for p in paths])

    def not_run(self) -> tuple[int, int]:
        """(repetitions the experiment statement asks for that have no record, finished or failed; all it
        asks for): a run stopped early (killed, Ctrl-C) leaves the first above 0. (0, 0) without a statement."""
        exp_ = self.experiment or {}
        protocol = exp_.get("protocol") or {}
        per_cell = int(protocol.get("repetitions") or 1) if protocol.get("name") == "random" else 1
        datasets = [d.get("name") for d in exp_.get("datasets", ())]
        pipelines = list(exp_.get("pipelines", ()))
        counts: dict[tuple[Any, Any], int] = {}
        for r in self.records:
            cell = (r.get("dataset", {}).get("name"), r.get("pipeline", {}).get("name"))
            counts[cell] = counts.get(cell, 0) + 1
        expected = per_cell * len(datasets) * len(pipelines)
        missing = sum(max(0, per_cell - counts.get((d, p), 0)) for d in datasets for p in pipelines)
        return missing, expected

    def incomplete_notes(self) -> list[str]:
        """What a report of these results should say first when the run that wrote them did not finish."""
        notes = [f"{path}: its last line is cut off (a run killed while writing it) and is left out"
                 for path in self.torn]
        missing, expected = self.not_run()
        if missing:
            notes.append(f"{missing} of {expected} repetitions of the experiment were not run (an interrupted "
                         f"run?): the tables count the others only; run the same command with --resume to finish")
        return notes

    def ok(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("status") == "ok"]

    def problems(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("status") != "ok"]

    def datasets(self) -> list[str]:
        """Names in the run's order (its statement), not the order records completed in (``--jobs``,
        ``--cluster``), so a table does not depend on scheduling; then any other names as they come."""
        stated = [d.get("name") for d in (self.experiment or {}).get("datasets", ())]
        return _in_order(stated, (r["dataset"]["name"] for r in self.ok()))

    def pipelines(self) -> list[str]:
        return _in_order((self.experiment or {}).get("pipelines", ()), (r["pipeline"]["name"] for r in self.ok()))

    def metrics(self) -> list[str]:
        """The metrics the results hold: their experiment's, else those the finished records carry."""
        names = list((self.experiment or {}).get("metrics") or [])
        if not names:
            for r in self.ok():
                names += [k for k in r["metrics"] if k not in ("errors", "n_evaluated") and k not in names]
        return names

    def cell(self, dataset: str, pipeline: str) -> list[dict[str, Any]]:
        """Records of one (dataset, pipeline), ordered by repetition."""
        return list(self._cells().get((dataset, pipeline), ()))

    def _cells(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The finished records by (dataset, pipeline), each ordered by repetition, made once for the records
        as they are: a table asks for every cell, and a scan of all records per cell took a minute for
        2,000 datasets of 10 runs of 2 pipelines (quadratic in the number of datasets)."""
        records = self.records
        stamp = (id(records), len(records), id(records[0]) if records else 0, id(records[-1]) if records else 0)
        cached = self.__dict__.get("_cell_index")
        if cached is None or cached[0] != stamp:
            index: dict[tuple[str, str], list[dict[str, Any]]] = {}
            for r in self.ok():
                index.setdefault((r["dataset"]["name"], r["pipeline"]["name"]), []).append(r)
            for rows in index.values():
                rows.sort(key=lambda r: r["repetition"])
            cached = (stamp, index)
            self.__dict__["_cell_index"] = cached
        return cached[1]

    def values(self, dataset: str, pipeline: str, metric: str = "error") -> list[float]:
        out = []
        for r in self.cell(dataset, pipeline):
            v = r["metrics"].get(metric)
            out.append(float("nan") if v is None or isinstance(v, (dict, list)) else float(v))
        return out

    def to_frame(self) -> Any:
        """A pandas DataFrame of the scalar metrics (needs pandas)."""
        try:
            import pandas as pd  # optional
        except ImportError:
            from toolkit.errors import CapabilityError

            raise CapabilityError("Results.to_frame needs pandas (pip install pandas); Results.records holds the "
                                  "same values as dicts") from None

        rows = []
        for r in self.ok():
            row = {"dataset": r["dataset"]["name"], "pipeline": r["pipeline"]["name"], "repetition": r["repetition"]}
            row.update({k: v for k, v in r["metrics"].items() if not isinstance(v, (dict, list))})
            rows.append(row)
        return pd.DataFrame(rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _in_order(stated: Iterable[Any], seen: Iterable[str]) -> list[str]:
    """The names of ``seen`` (each once): first those ``stated``, in that order, then the rest as they come."""
    present = _unique(seen)
    known = set(present)
    first = [name for name in _unique(n for n in stated if isinstance(n, str)) if name in known]
    placed = set(first)
    return first + [name for name in present if name not in placed]


def latest_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the last record per key (a resumed run may have retried a failed task)."""
    by_key: dict[str, dict[str, Any]] = {}
    for r in records:
        key = r.get("key")
        if key in by_key and by_key[key].get("status") == "ok" and r.get("status") != "ok":
            continue
        by_key[key] = r
    return list(by_key.values())
