"""Test output: log lines, the ok/FAIL lines of the cases with their counts
and the summary line, the table and verdict of the quality tests."""

import sys
import time


def log(msg=""):
    """Print a line at once (the output of a long test is followed live)."""
    print(msg, flush=True)


class Tally:
    """The cases of a test: 'ok   WHAT' and 'FAIL WHAT' lines, counted.

    cases is counted by the test (a case may print no line, or several);
    failed by fail() and result()."""

    def __init__(self):
        self.cases = 0
        self.failed = 0

    def ok(self, msg):
        log("ok   " + msg)

    def fail(self, msg):
        self.failed += 1
        log("FAIL " + msg)

    def result(self, passed, msg):
        """ok(msg) or fail(msg); returns passed."""
        (self.ok if passed else self.fail)(msg)
        return passed

    def summary(self, name, unit="cases"):
        """Print 'NAME: N cases, F failed'; returns the exit status, 1 when
        a case failed."""
        log("%s: %d %s, %d failed" % (name, self.cases, unit, self.failed))
        return 1 if self.failed else 0


def finish(name, lines, report, failures, t_start):
    """Print the table of 'lines' (also written to 'report' when given) and
    the run time, then exit with status 1 listing the failures, if any."""
    table = "\n".join(lines)
    print()
    print(table)
    print("\n(%.0f s)" % (time.time() - t_start))
    if report:
        with open(report, "w") as f:
            f.write(table + "\n")
    if failures:
        for f in failures:
            print("FAIL: " + f)
        sys.exit(1)
    print("%s: PASS" % name)
