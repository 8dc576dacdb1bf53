# SPDX-License-Identifier: GPL-2.0
"""kernel/progress.sh: a build's progress against its total, with the time
left at the rate so far, and without a total where none is known."""
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRESS = os.path.join(ROOT, "kernel", "progress.sh")

# a stand-in for make: 4 objects at once, then nothing until it is stopped
FAKE_MAKE = ("printf '  CC      a.o\\n  CC      b.o\\n  AS      c.o\\n"
             "  CC      mm/d.o\\n'; sleep 2.5")


def run(script, **env):
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["bash", "-c", ". %s; obj=/nowhere; %s" % (PROGRESS, script)],
                           env=dict(os.environ, PROGRESS_EVERY="1", **env), cwd=d,
                           capture_output=True, text=True, timeout=60)
    return r


class Progress(unittest.TestCase):
    def test_against_a_total(self):
        r = run("run_progress building log bash -c \"%s\"" % FAKE_MAKE,
                PROGRESS_TOTAL="10")
        self.assertEqual(r.returncode, 0, r.stderr)
        # 4 of 10 after 1 s: 6 more at 4 a second, 1.5 s, said as 1 s
        self.assertIn("kernel: building: 1s, 4 of about 10 objects compiled, "
                      "about 1s left at this rate, now at mm/d.o", r.stdout)
        self.assertIn("kernel: building: 2s, 4 of about 10 objects compiled, "
                      "about 3s left at this rate", r.stdout)

    def test_no_total_no_estimate(self):
        r = run("run_progress building log bash -c \"%s\"" % FAKE_MAKE)
        self.assertIn("kernel: building: 1s, 4 objects compiled, now at mm/d.o",
                      r.stdout)
        self.assertNotIn("left", r.stdout)

    def test_the_command_status_is_passed_on(self):
        self.assertEqual(run("run_progress x log false").returncode, 1)

    def test_time_left_in_words(self):
        # 807 s is 13.45 min; 90 s, 1.5 min, rounds up
        for args, want in (("100 100 907", "about 13 min left at this rate"),
                           ("60 30 60", "about 60s left at this rate"),
                           ("90 30 60", "about 2 min left at this rate"),
                           ("40 907 907", "linking"),
                           ("40 950 907", "linking")):
            r = run("time_left %s" % args)
            self.assertEqual(r.stdout.strip(), want, args)


if __name__ == "__main__":
    unittest.main()
