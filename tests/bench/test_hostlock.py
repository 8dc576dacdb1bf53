# SPDX-License-Identifier: GPL-2.0
"""The host-state lock (bench/hostlock.py): two runs that change the host's
pools and THP at once take turns, and the host ends as it was.

Without it, run A raises the pool from 10 to 18 pages, run B (which read
18) raises it to 26, A restores 10 while B still runs on its pages, and B
restores 18: B lost its pages mid-run and the host is left with 8 pages
it never had."""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from tests.bench.common import ROOT
from bench.hostlock import HostLock, _parent

# One run's use of the pools: hold, raise by its own 8 pages, run a while,
# look at the pool, restore.  Prints when it ran and what it saw.
RUN = """
import json, time
from bench.benchrun import HugePools
pools = HugePools(%(sysfmt)r)
pools.hold()
want = pools.read(2048) + 8
pools.raise_to(2048, want)
start = time.time()
time.sleep(0.6)
saw = pools.read(2048)
end = time.time()
pools.restore()
print(json.dumps({"start": start, "end": end, "saw": saw, "want": want}))
"""


# A holder of the process's shared lock that starts CHILD and prints, as
# JSON, the first line CHILD writes on stderr ("" when it writes none
# before it ends); then it stops CHILD.
HOLDER = """
import json, os, subprocess, sys
from bench.hostlock import HOST_LOCK
HOST_LOCK.acquire("parent")
child = subprocess.Popen([sys.executable, "-c", %(child)r],
                         env=dict(os.environ, **%(env)r),
                         stderr=subprocess.PIPE, text=True)
first = child.stderr.readline()
child.kill()
child.wait()
print(json.dumps(first))
"""
CHILD = """
from bench.hostlock import HOST_LOCK, HostLock
%(lock)s.acquire("child")
"""


def nr_pages(sysfmt):
    with open(sysfmt % 2048) as f:
        return int(f.read())


class TwoRunsAtOnce(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        pool = os.path.join(self.tmp.name, "hugepages-2048kB")
        os.makedirs(pool)
        self.sysfmt = os.path.join(self.tmp.name, "hugepages-%dkB", "nr_hugepages")
        with open(self.sysfmt % 2048, "w") as f:
            f.write("10\n")
        # A lock of the test's own, and no owner inherited from the suite
        # (whose runner holds the real one); the repository root is the
        # root of the children's imports.
        self.env = dict(os.environ, HUGETLB_HOST_LOCK=os.path.join(self.tmp.name, "lock"),
                        PYTHONPATH=ROOT)
        self.env.pop("HUGETLB_HOST_LOCK_OWNER", None)

    def tearDown(self):
        self.tmp.cleanup()

    def start(self, env=None):
        code = RUN % {"sysfmt": self.sysfmt}
        return subprocess.Popen([sys.executable, "-c", code], env=env or self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, procs):
        out = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, stderr)
            out.append((json.loads(stdout), stderr))
        return out

    def test_they_take_turns_and_the_host_ends_as_it_was(self):
        first = self.start()
        time.sleep(0.2)
        runs = self.finish([first, self.start()])
        (a, _), (b, waited) = runs
        self.assertLessEqual(a["end"], b["start"], "the runs overlapped: %r" % runs)
        for run, _ in runs:
            self.assertGreaterEqual(run["saw"], run["want"], "a run lost its pages")
        self.assertEqual(nr_pages(self.sysfmt), 10)
        self.assertIn("waiting for the host's hugetlb/THP settings: pid %d" % first.pid, waited)

    def test_a_run_started_by_the_holder_does_not_wait_for_it(self):
        # The holder's child (the bench suite's own native run) runs inside
        # its turn; a deadlock here would hang until the timeout.
        code = ("import os, subprocess, sys\n"
                "from bench.hostlock import HOST_LOCK\n"
                "HOST_LOCK.acquire('parent')\n"
                "sys.exit(subprocess.run([sys.executable, '-c', %r]).returncode)\n"
                % (RUN % {"sysfmt": self.sysfmt}))
        r = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("waiting", r.stderr)
        self.assertEqual(nr_pages(self.sysfmt), 10)

    def test_a_run_started_further_down_does_not_wait_for_it(self):
        # make test starting the bench suite starting bench/run.py: the
        # holder is a grandparent, found through /proc/PID/stat's ppid
        self.assertEqual(_parent(os.getpid()), os.getppid())
        run = RUN % {"sysfmt": self.sysfmt}
        middle = ("import subprocess, sys\n"
                  "sys.exit(subprocess.run([sys.executable, '-c', %r]).returncode)\n"
                  % run)
        code = ("import subprocess, sys\n"
                "from bench.hostlock import HOST_LOCK\n"
                "HOST_LOCK.acquire('parent')\n"
                "sys.exit(subprocess.run([sys.executable, '-c', %r]).returncode)\n"
                % middle)
        r = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("waiting", r.stderr)
        self.assertEqual(nr_pages(self.sysfmt), 10)

    def first_line_of_child(self, lock, env):
        code = HOLDER % {"env": env, "child": CHILD % {"lock": lock}}
        r = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_a_child_waits_for_a_lock_its_parent_does_not_hold(self):
        # the parent holds the shared lock of this path: a private lock
        # of the same path is not handed down, the child waits for it
        path = self.env["HUGETLB_HOST_LOCK"]
        self.assertIn("child: waiting for the host's hugetlb/THP settings: pid ",
                      self.first_line_of_child("HostLock(%r)" % path, {}))
        # the child's shared lock is another path (its HUGETLB_HOST_LOCK),
        # which the test holds: the parent's is no excuse not to wait
        other = os.path.join(self.tmp.name, "other")
        gate = HostLock(other)
        gate.acquire("test_hostlock")
        self.addCleanup(gate.release)
        self.assertIn("child: waiting for the host's hugetlb/THP settings: pid %d"
                      % os.getpid(), self.first_line_of_child(
                          "HOST_LOCK", {"HUGETLB_HOST_LOCK": other}))

    def test_nested_acquires_hold_the_lock_until_the_last_release(self):
        path = os.path.join(self.tmp.name, "nested")
        lock = HostLock(path)

        def taken():
            fd = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return False
            except BlockingIOError:
                return True
            finally:
                os.close(fd)
        lock.acquire("test_hostlock")
        lock.acquire("test_hostlock")
        lock.release()
        self.assertTrue(taken())
        lock.release()
        self.assertFalse(taken())
        lock.release()          # one too many: nothing
        self.assertFalse(taken())

    def test_a_private_lock_leaves_the_shared_one_to_the_children(self):
        # A test's own lock (another path), taken and given back while the
        # process holds its shared one, must not hide the shared one from
        # the children: they would wait for their own parent for ever.
        code = ("import subprocess, sys\n"
                "from bench.hostlock import HOST_LOCK, HostLock\n"
                "HOST_LOCK.acquire('parent')\n"
                "private = HostLock(%r)\n"
                "private.acquire('parent')\n"
                "private.release()\n"
                "sys.exit(subprocess.run([sys.executable, '-c', %r]).returncode)\n"
                % (os.path.join(self.tmp.name, "private"), RUN % {"sysfmt": self.sysfmt}))
        r = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("waiting", r.stderr)

    def test_a_dead_holder_frees_the_lock(self):
        holder = subprocess.Popen(
            [sys.executable, "-c", "import time\n"
             "from bench.hostlock import HOST_LOCK\nHOST_LOCK.acquire()\nprint('held', flush=True)\n"
             "time.sleep(60)"],
            env=self.env, stdout=subprocess.PIPE, text=True)
        self.assertEqual(holder.stdout.readline().strip(), "held")
        holder.kill()
        holder.wait()
        (run, _), = self.finish([self.start()])
        self.assertGreaterEqual(run["saw"], run["want"])


THP = "/sys/kernel/mm/transparent_hugepage/"


def host_state():
    """The host files a native run may change, as they read now."""
    state = {}
    for path in [THP + "enabled", THP + "defrag"] + [
            "/sys/kernel/mm/hugepages/%s/nr_hugepages" % d
            for d in sorted(os.listdir("/sys/kernel/mm/hugepages"))]:
        with open(path) as f:
            state[path] = f.read().strip()
    return state


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists(THP + "enabled"),
                     "needs root and THP to change the host's settings")
class TwoNativeRuns(unittest.TestCase):
    """Two real `bench/run.py --mode native` runs started together, each
    needing THP set for its thp backing and the pool for its hugetlbfs one.
    The test holds their lock until both say they wait for it."""

    def test_both_wait_then_complete_and_leave_the_host_as_it_was(self):
        from bench.hostlock import HOST_LOCK, HostLock
        HOST_LOCK.acquire("test_hostlock")    # this test changes THP too
        with open(THP + "enabled") as f:
            saved = f.read().split("[")[1].split("]")[0]
        try:
            with open(THP + "enabled", "w") as f:
                f.write("never\n")          # so that each run must set it
            before = host_state()
            outs, runs = self.two_runs(HostLock)
            after = host_state()
        finally:
            with open(THP + "enabled", "w") as f:
                f.write(saved + "\n")
            HOST_LOCK.release()
        for p, (out, err) in zip(runs, outs):
            self.assertEqual(p.returncode, 0, out + err)
            self.assertIn("(complete)", out)
            # Each found the host as it was: THP off, which it set for itself.
            self.assertIn("bench: THP enabled set from never to madvise", out)
        self.assertEqual(after, before)

    def two_runs(self, HostLock):
        with tempfile.TemporaryDirectory() as tmp:
            gate = HostLock(os.path.join(tmp, "lock"))
            gate.acquire("test_hostlock")
            env = dict(os.environ, HUGETLB_HOST_LOCK=gate.path)
            env.pop("HUGETLB_HOST_LOCK_OWNER", None)
            argv = [sys.executable, "-m", "bench.run", "--mode",
                    "native", "--profile", "tiny", "--benches", "fault", "--backings",
                    "devzero,hugetlbfs,thp", "--results-dir", tmp]
            runs = [subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) for _ in range(2)]
            # Each says it waits before anything else on stderr; what came
            # instead (a traceback) is kept for the failure message.
            waited = []
            for p in runs:
                seen = []
                for line in p.stderr:
                    seen.append(line)
                    if "waiting for the host's hugetlb/THP settings" in line:
                        break
                waited.append("".join(seen))
            gate.release()
            outs = [p.communicate(timeout=300) for p in runs]
            for w in waited:
                self.assertIn("waiting for the host's", w, "a run did not wait: %r" % outs)
            return [(out, w + err) for (out, err), w in zip(outs, waited)], runs


if __name__ == "__main__":
    unittest.main()
