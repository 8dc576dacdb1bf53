# SPDX-License-Identifier: GPL-2.0
"""What every part of bench/run.py shares: the project root, sizes,
reading the host's small text files, and putting back host settings a
run changed."""

import os
import re
import sys

from bench.hostlock import HOST_LOCK


# bench/benchrun/base.py -> the project root
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

MB = 1 << 20
GB = 1 << 30

# The page sizes the pools have, and which guest architecture has which,
# are bench/contract.py's POOLS (arch_pools()); these name the two whose
# sizing is special: 2 MB (realprog, guest RAM) and 1 GB (aligned RAM).
KB_2M, KB_1G = 2048, 1048576


def size_bytes(s):
    mult = {"K": 1 << 10, "M": MB, "G": GB}
    s = str(s)
    if s[-1].upper() in mult:
        return int(float(s[:-1]) * mult[s[-1].upper()])
    return int(s)


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def bracketed(text):
    """The chosen value of a sysfs choice file: "always [madvise] never"."""
    m = re.search(r"\[([^]]+)\]", text or "")
    return m.group(1) if m else text


class SavedHostState:
    """Host settings a run changes under the host-state lock
    (bench/hostlock.py).  saved maps each changed key to the value found;
    a subclass gives _write(key, value) and _what(key, value), the words
    a failed restore names it by."""

    def __init__(self):
        self.saved = {}
        self.holding = False

    def hold(self):
        """Takes the host-state lock until restore(): call it before the
        reads a change is computed from."""
        if not self.holding:
            HOST_LOCK.acquire()
            self.holding = True

    def restore(self):
        """Puts back every saved value (call it from finally; it is
        idempotent).  A value left unrestored keeps the lock until this
        process ends."""
        for key, value in list(self.saved.items()):
            try:
                self._write(key, value)
                del self.saved[key]
            except OSError as e:
                print("bench: RESTORE FAILED for %s: %s" % (self._what(key, value), e),
                      file=sys.stderr)
        if self.holding and not self.saved:
            self.holding = False
            HOST_LOCK.release()
