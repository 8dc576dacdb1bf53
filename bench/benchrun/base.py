# SPDX-License-Identifier: GPL-2.0
"""What every part of bench/run.py shares: the project root, sizes, and
reading the host's small text files."""

import os
import re


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
