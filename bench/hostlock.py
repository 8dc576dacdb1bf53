# SPDX-License-Identifier: GPL-2.0
"""One lock around every change of the host's shared memory settings.

The hugetlb pools (vm.nr_hugepages and the per-size pools), THP and the
overcommit sysctls are host-wide: two runs at once (a test suite and
`make bench-native`, or two suites) would take each other's pages and
each restore the other's values.  Whatever changes one of them takes this
lock first and holds it until everything it changed is restored; a second
run waits, saying for whom.

It is flock(2) on LOCK_PATH (HUGETLB_HOST_LOCK overrides it, for tests),
so the kernel drops it when its holder dies, however it dies.  A program
that a holder starts (the bench suite starting bench/run.py, make test
starting the bench suite) is part of the holder's run: it finds the
holder among its ancestors through HUGETLB_HOST_LOCK_OWNER and does not
wait for itself.  Shell users: `flock /run/lock/hugetlb-host-state.lock CMD`."""
import fcntl
import os
import sys

LOCK_PATH = "/run/lock/hugetlb-host-state.lock"
OWNER_ENV = "HUGETLB_HOST_LOCK_OWNER"


def _parent(pid):
    """pid's parent (0 when unknown): the field after the command's ')'."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _held_by_ancestor():
    owner = os.environ.get(OWNER_ENV, "")
    if not owner.isdigit():
        return False
    pid = os.getppid()
    while pid > 1:
        if pid == int(owner):
            return True
        pid = _parent(pid)
    return False


class HostLock:
    """acquire()/release() nest: the lock is taken by the first acquire
    and given back by the matching last release."""

    def __init__(self, path=None):
        self.path = path or os.environ.get("HUGETLB_HOST_LOCK", LOCK_PATH)
        self.depth = 0
        self.fd = None

    def acquire(self, who="bench"):
        self.depth += 1
        if self.depth > 1 or _held_by_ancestor():
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 200, 0).decode(errors="replace").strip()
            print("%s: waiting for the host's hugetlb/THP settings: %s holds %s"
                  % (who, holder or "another run", self.path), file=sys.stderr, flush=True)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, ("pid %d (%s)\n" % (os.getpid(), " ".join(sys.argv)[:150])).encode(), 0)
        os.environ[OWNER_ENV] = str(os.getpid())

    def release(self):
        if self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0 and self.fd is not None:
            os.environ.pop(OWNER_ENV, None)
            os.close(self.fd)     # closing the only descriptor drops the flock
            self.fd = None


# The one lock of this process: the pools and the THP settings share it.
HOST_LOCK = HostLock()
