"""Work folders of the tests."""

import contextlib
import os
import shutil
import sys
import tempfile


def keep_requested():
    """KEEP_TMP=1: temporary folders are kept (tests/lib.sh reads it too)."""
    return os.environ.get("KEEP_TMP", "0") == "1"


def add_work_options(ap):
    """--work DIR (made if missing, never removed) and --keep."""
    ap.add_argument("--work", default=None,
                    help="folder for the files of the test (default: a temporary one)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary folder (also KEEP_TMP=1)")


@contextlib.contextmanager
def work_dir(path=None, prefix="test.", keep=False):
    """The folder 'path' (made if missing, left in place), or a new temporary
    one named prefix..., removed at the end unless keep or KEEP_TMP=1 (its
    path then goes to stderr)."""
    if path:
        os.makedirs(path, exist_ok=True)
        yield path
        return
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        if keep or keep_requested():
            print("kept %s" % path, file=sys.stderr)
        else:
            shutil.rmtree(path, ignore_errors=True)


def fresh_dir(path):
    """'path' made anew, empty: nothing of an earlier run can stand in for
    this one's output."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path
