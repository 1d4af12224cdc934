"""The tidy results table: its columns, the CSV file appended task by task, reading it back."""
import csv
import io
import os
from pathlib import Path

__all__ = ["COLUMNS", "NON_PRIVATE", "read_results", "task_key"]

#: the columns of a results table, in order: one row per task and checkpoint
COLUMNS = ("problem", "solver", "params", "run", "seed", "epsilon", "delta", "final",
           "passes", "objective", "optimum", "rel_error", "support_correct",
           "support_incorrect", "support_true", "ledger_epsilon", "time")
#: columns computed on the training data without noise (non-private diagnostics)
NON_PRIVATE = ("objective", "optimum", "rel_error", "support_correct", "support_incorrect",
               "support_true")
_INT = ("run", "seed", "support_correct", "support_incorrect", "support_true")
_FLOAT = ("epsilon", "delta", "passes", "objective", "optimum", "rel_error",
          "ledger_epsilon", "time")


def task_key(row):
    """The identity of the task a row belongs to (finished tasks are not rerun)."""
    return (row["problem"], row["solver"], row["params"], row["run"], row["epsilon"],
            row["delta"], row["seed"])


def sort_key(row):
    """Canonical order: by task, then its checkpoints, the final row last."""
    return task_key(row) + (row["final"], row["passes"])


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)  # round-trips exactly ("inf" and "nan" too)
    return str(value)


def _parse(record):
    """A CSV record (list of str) as a typed row; ValueError if malformed."""
    if len(record) != len(COLUMNS):
        raise ValueError(f"{len(record)} fields instead of {len(COLUMNS)}")
    row = dict(zip(COLUMNS, record))
    for name in _INT:
        row[name] = None if row[name] == "" else int(row[name])
    for name in _FLOAT:
        row[name] = None if row[name] == "" else float(row[name])
    if row["final"] not in ("0", "1"):
        raise ValueError(f"final must be 0 or 1, got {row['final']!r}")
    row["final"] = row["final"] == "1"
    return row


def format_rows(rows):
    """CSV text of ``rows`` (no header)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([_cell(row[name]) for name in COLUMNS])
    return out.getvalue()


def write_header(path):
    """Start ``path`` afresh: the header line only (replacing any file)."""
    with open(path, "w", newline="") as f:
        f.write(",".join(COLUMNS) + "\n")


def append_rows(path, rows):
    """Append one task's rows in a single write, flushed to disk."""
    with open(path, "a", newline="") as f:
        f.write(format_rows(rows))
        f.flush()
        os.fsync(f.fileno())


def _read(path):
    """(header, [(line text, parsed row or None)]) of a results file."""
    text = Path(path).read_text()
    lines = text.split("\n")
    complete = text.endswith("\n")
    header = next(csv.reader([lines[0]])) if lines and lines[0] else []
    if tuple(header) != COLUMNS:
        raise ValueError(f"{path} is not a results file of sparsedp.experiments: its "
                         f"header is {','.join(header)!r}, expected "
                         f"{','.join(COLUMNS)!r}")
    body = lines[1:-1] if complete else lines[1:]
    out = []
    for k, line in enumerate(body):
        last = k == len(body) - 1
        try:
            out.append((line, _parse(next(csv.reader([line])))))
        except (ValueError, StopIteration):
            if last and not complete:
                out.append((line, None))  # cut by an interruption mid-write
            else:
                raise ValueError(f"{path}, line {k + 2}: malformed row {line!r}") from None
    if not complete and body and out[-1][1] is not None:
        out[-1] = (out[-1][0], None)  # a last line without its newline may be cut short
    return out


def load_finished(path):
    """The rows of the finished tasks in ``path``; the file is rewritten without the rest.

    A task is finished when its final row is in the file.  Rows of an
    unfinished task (trace rows whose final row was never written) and a last
    line cut by an interruption are dropped, so that appending continues on a
    clean file.
    """
    entries = _read(path)
    rows = [row for _, row in entries if row is not None]
    finished = {task_key(row) for row in rows if row["final"]}
    kept = [(line, row) for line, row in entries
            if row is not None and task_key(row) in finished]
    if len(kept) != len(entries):
        tmp = Path(str(path) + ".tmp")
        with open(tmp, "w", newline="") as f:
            f.write(",".join(COLUMNS) + "\n" + "".join(line + "\n" for line, _ in kept))
        os.replace(tmp, path)
    return [row for _, row in kept]


def read_results(path):
    """The rows of a results CSV written by :func:`run_grid`, typed, in canonical order.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    list of dict
        One dict per row, keys :data:`COLUMNS`: ``run``, ``seed`` and the
        support counts as int (None on trace rows), ``final`` as bool, the other
        numbers as float, ``params`` as its JSON text.  Rows of tasks that were
        interrupted before their final row are left out.  The same rows as
        ``pandas.read_csv(path)``, typed the same way for every reader.
    """
    rows = [row for _, row in _read(path) if row is not None]
    finished = {task_key(row) for row in rows if row["final"]}
    return sorted((row for row in rows if task_key(row) in finished), key=sort_key)


def as_rows(results):
    """Rows from a results path or a list of row dicts (checked)."""
    if isinstance(results, (str, os.PathLike)):
        return read_results(results)
    if isinstance(results, dict) or not hasattr(results, "__iter__"):
        raise TypeError(f"results must be a path to a results CSV or a list of row dicts "
                        f"(as run_grid returns), got {type(results).__name__}")
    rows = list(results)
    for k, row in enumerate(rows):
        if not isinstance(row, dict) or not set(COLUMNS) <= set(row):
            raise ValueError(f"results[{k}] is not a results row (a dict with the columns "
                             f"{', '.join(COLUMNS)})")
    return rows
