# SPDX-License-Identifier: GPL-2.0
"""A plan checked before anything is built, booted or changed: each
invocation's options by its binary's own rules (`benchtool check`, which
parses them with the runner's parse_opts: bench/runner.c), --sizes by the
runner's size parser (`benchtool sizes`), the guest's options by
run-qemu.sh itself (--print-config, which needs no kernel), and the memory
the run needs against this host's.  One rule each, in one place: Python
and C cannot disagree on what a size or an option is.

`make bench` runs this (bench/run.py --dry-run) before deps, the kernel
and the initramfs (bench/bench.mk, bench-check)."""

import json
import os
import subprocess

from bench import contract

from .base import GB, ROOT
from .profiles import REALPROG


class BadInput(Exception):
    """An option or a plan the run cannot do; the message names cause and
    fix.  bench/run.py prints it and exits 2, as argparse does."""


def benchtool(*argv):
    """(exit status, stdout, stderr) of build/bench/benchtool ARGV (built
    by contract.load() before any check runs)."""
    p = subprocess.run([os.path.join(ROOT, contract.BENCHTOOL)] +
                       list(argv), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr.strip()


def sizes(text):
    """The bytes of a --sizes list, by the runner's rules; BadInput with
    the runner's reason (0, a negative size, an unknown suffix, an empty
    item) otherwise."""
    rc, out, err = benchtool("sizes", text)
    if rc:
        raise BadInput(err.replace("benchtool: ", "", 1))
    return [int(x) for x in out.split()]


def invocations(runs):
    """Each (bench, argv) of a plan through its binary's option parser:
    an unknown option, a bad value, a model that is no preset or spec.
    realprog is its own program (bench/realprog/), whose arguments the
    profile writes and whose backings parse_args checked."""
    for bench, argv in runs:
        if bench == REALPROG:
            continue
        rc, _, err = benchtool("check", bench, *argv)
        if rc:
            raise BadInput("%s (benchmark %s's options: %s)" % (
                err.replace("\n", " "), bench, " ".join(argv)))


def mem_total(root="/"):
    """This host's RAM in bytes (MemTotal), None where unreadable."""
    try:
        with open(os.path.join(root, "proc", "meminfo")) as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def too_big(need, what, root="/"):
    """BadInput when need bytes (what: the words for them) exceed this
    host's RAM."""
    have = mem_total(root)
    if have and need > have:
        raise BadInput(
            "%s %.0f GB, more than this host's %.0f GB of RAM: choose "
            "smaller --sizes (the guest needs about three times the "
            "largest working set) or a smaller --profile"
            % (what, need / GB, have / GB))


def guest(cmd, root="/"):
    """run-qemu.sh's own checks of a boot's options (--qemu-arg
    included), without booting or needing the kernel built; then the
    guest's memory against this host's RAM."""
    i = cmd.index("--")
    p = subprocess.run(cmd[:i] + ["--print-config"] + cmd[i:], cwd=ROOT,
                       capture_output=True, text=True)
    if p.returncode:
        raise BadInput("run-qemu.sh refuses the boot's options (%s): %s"
                       % (" ".join(cmd[1:i]), p.stderr.strip()))
    try:
        mb = json.loads(p.stdout)["memory_mb"]
    except (ValueError, KeyError, TypeError):
        raise BadInput("run-qemu.sh --print-config gave no memory_mb: %s"
                       % p.stdout.strip()[:300])
    too_big(mb << 20, "the plan needs a guest of", root)


def native(p, root="/"):
    """A native run maps its largest working set (max_bytes), and the
    pools hold one of each kind at once."""
    too_big(p["max_bytes"], "the largest working set is", root)
