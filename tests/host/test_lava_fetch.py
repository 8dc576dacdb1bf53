# SPDX-License-Identifier: GPL-2.0
"""lava/fetch.py against a recorded log: tests/fixture/lava/ holds the log
lava-run wrote for `lava/job.py --profile tiny --device qemu` (x86_64,
TCG) and what a server would say of that job.  Every @row of the log is
in the CSVs, in order; meta.json has the @meta lines and where the job
ran; render.py and compare work on the folder; a job cut short keeps its
rows and says why it failed; the REST path sends the token in the header
only."""
import csv
import gzip
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

from lava import fetch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "fixture", "lava")
LOG = os.path.join(FIXTURE, "tiny-x86_64-qemu.log.gz")
INFO = os.path.join(FIXTURE, "tiny-x86_64-qemu.job-info.json")


def log_rows(lines):
    """{bench: [csv row]} straight from the log lines, independently of
    fetch.py: LAVA escaped each double quote with a backslash."""
    rows = {}
    for ln in lines:
        msg = json.loads(ln).get("msg") if '"lvl": "target"' in ln else None
        if isinstance(msg, str) and msg.startswith("@row "):
            _, bench, row = msg.split(" ", 2)
            rows.setdefault(bench, []).append(row.replace('\\"', '"'))
    return rows


def csv_rows(run, bench):
    with open(os.path.join(run, bench + ".csv")) as f:
        return [",".join(r) for r in list(csv.reader(f))[1:]]


def fetch_log(results, log, info=INFO):
    r = subprocess.run([sys.executable, "-m", "lava.fetch", "1", "--log", log, "--job-info", info,
                        "--results-dir", results], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    runs = [d for d in os.listdir(results) if d != "latest"] if os.path.isdir(results) else []
    return r, (os.path.join(results, runs[0]) if runs else None)


class FetchRecorded(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        with gzip.open(LOG, "rt") as f:
            cls.lines = f.read().splitlines()
        cls.r, cls.rundir = fetch_log(os.path.join(cls.tmp.name, "results"), LOG)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_row(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        want = log_rows(self.lines)
        self.assertEqual(sorted(want), ["chase", "fault", "faultscale", "mlp", "realprog",
                                        "stream", "streamk"])
        for bench, rows in want.items():
            with self.subTest(bench=bench):
                self.assertEqual(csv_rows(self.rundir, bench), rows)

    def test_meta(self):
        with open(os.path.join(self.rundir, "meta.json")) as f:
            m = json.load(f)
        self.assertEqual(m["status"], "complete")
        self.assertEqual(m["errors"], [])
        self.assertEqual(m["lava"]["job_id"], "1")
        self.assertEqual(m["lava"]["device_type"], "qemu")
        self.assertEqual(m["lava"]["device"], "lava-run on vm")
        self.assertEqual((m["mode"], m["timing_source"], m["profile"]), ("guest", "tcg", "tiny"))
        self.assertEqual(m["kernel"], "6.12.118")
        # a guest's CPU is the emulator's: compare's host check gets the
        # worker, unrecorded, not the guest's CPU
        self.assertEqual(m["host_cpu"], "LAVA worker of device lava-run on vm (not recorded)")
        # @meta lines with quoted strings came through whole
        self.assertEqual(m["other"]["cpu_id"]["name"], "QEMU TCG CPU version 2.5+")
        self.assertEqual(m["thp_guest"]["enabled"], "madvise")
        self.assertEqual(set(m["bench_exit"].values()), {0})
        self.assertIn("devhugetlb", m["backings"])

    def test_render_and_compare_unchanged(self):
        r = subprocess.run([sys.executable, "-m", "plots.render", self.rundir], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.rundir, "index.html")))
        out = os.path.join(self.tmp.name, "cmp")
        r = subprocess.run([sys.executable, "-m", "compare.compare", "diff", self.rundir, self.rundir,
                            "--out", out], cwd=ROOT, capture_output=True, text=True, timeout=300)
        # one timed run a side: compared, and too few to tell (exit 4)
        self.assertEqual(r.returncode, 4, r.stdout[-2000:] + r.stderr)
        self.assertIn("chase", r.stdout)
        self.assertIn("cannot tell", r.stdout)

    def test_a_failed_job_keeps_its_rows(self):
        # The recorded log cut after its 100th @row line, then what LAVA
        # logs when the connection to the board is lost (its entries as in
        # a lava-run of a job whose QEMU died).
        rows = 0
        for i, ln in enumerate(self.lines):
            rows += '"msg": "@row ' in ln
            if rows == 100:
                break
        cut = self.lines[:i + 1] + [
            '{"dt": "2026-12-04T18:40:00", "lvl": "error", "msg": "lava-test-shell timed out"}',
            '{"dt": "2026-12-04T18:40:01", "lvl": "results", "msg": {"case": "job", '
            '"definition": "lava", "error_msg": "Connection closed", "error_type": '
            '"Infrastructure", "result": "fail"}}']
        log = os.path.join(self.tmp.name, "cut.log")
        info = os.path.join(self.tmp.name, "info.json")
        with open(log, "w") as f:
            f.write("\n".join(cut) + "\n")
        with open(info, "w") as f:
            json.dump({"device_type": "qemu", "actual_device": "qemu01",
                       "health": "Incomplete"}, f)
        r, run = fetch_log(os.path.join(self.tmp.name, "failed"), log, info)
        self.assertEqual(r.returncode, 1, r.stderr)
        with open(os.path.join(run, "meta.json")) as f:
            m = json.load(f)
        self.assertEqual(m["status"], "failed")
        errors = "\n".join(m["errors"])
        self.assertIn("lava-test-shell timed out", errors)
        self.assertIn("LAVA job failed (Infrastructure): Connection closed", errors)
        self.assertIn("LAVA job health Incomplete", errors)
        self.assertRegex(errors, r"no exit status from: .*streamk")
        want = log_rows(cut)
        self.assertEqual(sum(len(v) for v in want.values()), 100)
        for bench, rs in want.items():
            self.assertEqual(csv_rows(run, bench), rs)

    def test_a_finalize_error_of_a_passed_job_is_noted_only(self):
        # What LAVA logged when QEMU (a 10 GB guest, loaded host) took
        # longer than pexpect waits to exit after "poweroff", every result
        # in: LAVA passed the job (make test-lava, job 1).
        err = ('{"dt": "2026-12-04T21:50:03.468610", "lvl": "error", "msg": '
               '"Failed to run \'finalize\': Could not terminate the child."}')
        last = max(i for i, ln in enumerate(self.lines) if '"definition": "lava"' in ln
                   and '"case": "job"' in ln)
        for result, status in (("pass", "complete"), ("fail", "failed")):
            with self.subTest(job=result):
                lines = self.lines[:last] + [err, self.lines[last].replace(
                    '"result": "pass"', '"result": "%s"' % result)] + self.lines[last + 1:]
                log = os.path.join(self.tmp.name, "finalize-%s.log" % result)
                with open(log, "w") as f:
                    f.write("\n".join(lines) + "\n")
                r, run = fetch_log(os.path.join(self.tmp.name, "finalize-" + result), log)
                with open(os.path.join(run, "meta.json")) as f:
                    m = json.load(f)
                self.assertEqual(m["status"], status, m["errors"])
                self.assertEqual(r.returncode, 0 if result == "pass" else 1, r.stderr)
                # a passed job's finalize error is a note; a failed job's
                # is one of its failures
                msg = "Failed to run 'finalize': Could not terminate the child."
                noted, errors = m["lava"].get("cleanup_errors", []), m["errors"]
                self.assertEqual((msg in noted, msg in errors),
                                 (result == "pass", result == "fail"), m)

    def test_not_our_job(self):
        log = os.path.join(self.tmp.name, "other.log")
        with open(log, "w") as f:
            f.write('- {"dt": "2026-12-04T18:00:00", "lvl": "target", "msg": "login:"}\n')
        r, _ = fetch_log(os.path.join(self.tmp.name, "other"), log)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no '@meta lava_job' line", r.stderr)


class FetchRest(unittest.TestCase):
    """The REST path against a stand-in server on loopback that serves the
    recorded job as /api/v0.2/jobs/7/ and its log in the server's YAML
    list form; the token goes in the Authorization header only."""
    TOKEN = "s3cret-token-for-test"

    def setUp(self):
        with gzip.open(LOG, "rt") as f:
            log = "".join("- " + ln + "\n" for ln in f.read().splitlines())
        info = json.dumps({"id": 7, "device_type": "qemu", "actual_device": "qemu-lab-03",
                           "state": "Finished", "health": "Complete"})
        pages = {"/api/v0.2/jobs/7/": info, "/api/v0.2/jobs/7/logs/": log}
        self.auth = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(h):
                self.auth.append(h.headers.get("Authorization"))
                body = pages.get(h.path)
                h.send_response(200 if body else 404)
                h.end_headers()
                if body:
                    h.wfile.write(body.encode())

            def log_message(h, *a):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def fetch(self, job):
        url = "http://127.0.0.1:%d" % self.server.server_port
        return subprocess.run([sys.executable, "-m", "lava.fetch", job, "--server", url,
                               "--results-dir", self.tmp.name], cwd=ROOT, capture_output=True,
                              text=True, timeout=120,
                              env=dict(os.environ, LAVA_TOKEN=self.TOKEN))

    def test_rest(self):
        r = self.fetch("7")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.auth, ["Token " + self.TOKEN] * 2)
        run = os.path.join(self.tmp.name, "latest")
        with open(os.path.join(run, "meta.json")) as f:
            m = json.load(f)
        self.assertEqual((m["lava"]["job_id"], m["lava"]["device"], m["lava"]["health"]),
                         ("7", "qemu-lab-03", "Complete"))
        self.assertTrue(m["run_id"].endswith("-lava7-tiny"))
        for name in os.listdir(run):
            with open(os.path.join(run, name)) as f:
                self.assertNotIn(self.TOKEN, f.read(), name)
        self.assertNotIn(self.TOKEN, r.stdout + r.stderr)

    def test_unknown_job(self):
        r = self.fetch("8")
        self.assertEqual(r.returncode, 2)
        self.assertIn("404", r.stderr)
        self.assertNotIn(self.TOKEN, r.stderr)


class GuestLines(unittest.TestCase):
    def test_quotes_come_back_exactly(self):
        # what the guest printed -> LAVA's escaping (shell.py) -> back
        for printed in ('@meta x {"a": "b \\"q\\" c"}', 'a\\b"c', '""'):
            logged = printed.replace('"', '\\"')
            got = list(fetch.guest_lines([{"lvl": "target", "msg": logged}]))
            self.assertEqual(got, [printed])

    def test_both_log_forms(self):
        text = ('- {"dt": "x", "lvl": "target", "msg": "a"}\n'
                '{"dt": "y", "lvl": "info", "msg": "b"}\n'
                '{"dt": "z", "lvl": "targ')
        self.assertEqual([e["msg"] for e in fetch.read_log(text)], ["a", "b"])


if __name__ == "__main__":
    unittest.main()
