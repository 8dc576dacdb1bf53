# SPDX-License-Identifier: GPL-2.0
"""TAP result lines, as kselftest.h and the project's test runners print
them: the one parser, for compare's semantics (a revision's kselftest
results) and the test harness's tally (tests/harness.py)."""
import re

# kselftest.h writes "ok 3 # SKIP name: why", the project's runners
# "ok 3 name # SKIP why" or "ok - name".
_TAP_SKIP_FIRST = re.compile(r"^(ok|not ok) \d+ # SKIP (.*)$")
_TAP = re.compile(r"^(ok|not ok)(?: \d+)?(?: -)? (.*?)(?: # (.*))?$")


def parse_tap(lines):
    """[(name, ok, note, skipped)] for each TAP result line."""
    out = []
    for line in lines:
        m = _TAP_SKIP_FIRST.match(line)
        if m:
            out.append((m.group(2), True, "skipped", True))
            continue
        m = _TAP.match(line)
        if m:
            note = m.group(3) or ""
            out.append((m.group(2), m.group(1) == "ok", note,
                        note.startswith("SKIP")))
    return out
