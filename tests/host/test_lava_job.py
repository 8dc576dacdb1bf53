# SPDX-License-Identifier: GPL-2.0
"""LAVA jobs from lava/job.py: every device and architecture, every
profile, valid for LAVA's own schema (lava_common, for /usr/bin/python3),
with the pools, memory and job of bench/run.py and run-qemu.sh; and
hugetlb-lava-results, which turns the guest's lines into test cases."""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAVA_PY = "/usr/bin/python3"
JOBS = [(d, a) for d, arches in (("qemu", ("x86_64", "arm64")), ("ipxe", ("x86_64",)),
                                 ("uboot", ("arm64",))) for a in arches]


def have_lava_common():
    return os.access(LAVA_PY, os.X_OK) and subprocess.run(
        [LAVA_PY, "-c", "import lava_common.schemas"], capture_output=True).returncode == 0


def write_job(out, profile, arch, device):
    # full's sweep needs 14 GB, more than the default board (8G,4) has
    board = ["--board", "16G,4"] if profile == "full" and device != "qemu" else []
    r = subprocess.run([sys.executable, "-m", "lava.job", "--profile", profile, "--arch", arch,
                        "--device", device, "--out", out] + board, cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise AssertionError("lava/job.py %s %s %s: %s" % (profile, arch, device, r.stderr))
    with open(out) as f:
        return yaml.safe_load(f)


def validate(*paths):
    return subprocess.run([LAVA_PY, "lava/validate.py"] + list(paths), cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def run_py_command(profile, arch, *extra):
    r = subprocess.run([sys.executable, "-m", "bench.run", "--mode", "guest", "--profile", profile,
                        "--arch", arch, "--dry-run"] + list(extra), cwd=ROOT,
                       capture_output=True, text=True, timeout=120, check=True)
    return shlex.split(r.stdout.splitlines()[-1])


def print_config(*args):
    r = subprocess.run([os.path.join(ROOT, "run-qemu.sh")] + list(args) + ["--print-config"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(r.stdout)


def kernel_args(job):
    ctx = job["context"]
    if "extra_kernel_args" in ctx:
        return ctx["extra_kernel_args"].split()
    arg = job["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]
    return shlex.split(arg)[3].split()


def test_steps(job):
    return job["actions"][2]["test"]["definitions"][0]["repository"]["run"]["steps"]


@unittest.skipUnless(have_lava_common(), "no lava_common for /usr/bin/python3: run 'make deps' "
                     "(Debian package lava-common)")
class LavaJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.jobs = {}
        for profile in ("tiny", "quick", "full"):
            for device, arch in JOBS:
                path = os.path.join(cls.tmp.name, "%s-%s-%s.yaml" % (profile, arch, device))
                cls.jobs[path] = (profile, arch, device, write_job(path, profile, arch, device))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_job_is_valid_for_lava(self):
        r = validate(*self.jobs)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_distorted_job_is_refused(self):
        # LAVA has no "cpus" context variable (the CPU count goes in
        # extra_options), and no test definition without a format.
        path = next(p for p, j in self.jobs.items() if j[2] == "qemu")
        for name, distort, want in (
                ("context", lambda j: j["context"].update(cpus=2), "context"),
                ("testdef", lambda j: j["actions"][2]["test"]["definitions"][0]["repository"]
                 ["metadata"].pop("format"), "format")):
            with self.subTest(distortion=name):
                job = yaml.safe_load(open(path))
                distort(job)
                bad = os.path.join(self.tmp.name, "bad-%s.yaml" % name)
                with open(bad, "w") as f:
                    yaml.safe_dump(job, f)
                r = validate(bad)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn(want, r.stderr)

    def test_pools_memory_and_job_are_run_py_s(self):
        for path, (profile, arch, device, job) in self.jobs.items():
            if profile != "quick":
                continue
            with self.subTest(job=os.path.basename(path)):
                # a board is a real core: the chase picks its own TLB
                # model, and the plan is sized for the default board
                cmd = run_py_command(profile, arch,
                                     *(() if device == "qemu" else
                                       ("--model", "auto", "--board", "8G,4")))
                args = kernel_args(job)
                self.assertIn("hugepagesz=2M", args)
                self.assertEqual(args[args.index("hugepagesz=2M") + 1],
                                 "hugepages=" + cmd[cmd.index("--hugepages") + 1])
                self.assertIn("rdinit=/init", args)
                self.assertIn("hugetlb.job=shell", args)
                self.assertIn("hugetlb.accel=" + ("tcg" if device == "qemu" else "native"), args)
                want_mb = int(cmd[cmd.index("--mem") + 1].rstrip("M"))
                self.assertEqual(job["metadata"]["hugetlb.min_memory_mb"], want_mb)
                if device == "qemu":
                    self.assertEqual(job["context"]["memory"], want_mb)
                else:
                    self.assertFalse(any(a.startswith("console=") for a in args),
                                     "a lab's device type sets its own console")
                run = shlex.split(test_steps(job)[-1])
                self.assertEqual(run[:2], ["hugetlb-lava-results", "--metrics"])
                self.assertEqual(run[3:], ["--", "sh", "-c", cmd[-1]])
                # the benchmarks the job names are those the guest reports on
                meta = json.loads(shlex.split(test_steps(job)[0])[1][len("@meta lava_job "):])
                self.assertEqual(meta["benches"], re.findall(r'echo "@exit (\w+) ', cmd[-1]))
                timeout = int(cmd[cmd.index("--timeout") + 1])
                self.assertGreaterEqual(job["actions"][2]["test"]["timeout"]["minutes"] * 60,
                                        timeout)

    def test_hardware_boots(self):
        kinds = {(j[2], j[1]): j[3] for j in self.jobs.values()}
        ipxe, uboot = kinds[("ipxe", "x86_64")], kinds[("uboot", "arm64")]
        self.assertEqual(ipxe["actions"][1]["boot"]["method"], "ipxe")
        self.assertEqual(ipxe["actions"][0]["deploy"]["to"], "tftp")
        self.assertTrue(ipxe["actions"][0]["deploy"]["kernel"]["url"].endswith("/bzImage"))
        self.assertEqual(uboot["actions"][1]["boot"]["method"], "u-boot")
        self.assertEqual(uboot["actions"][0]["deploy"]["kernel"]["type"], "image")
        self.assertIn("dtb", uboot["actions"][0]["deploy"])
        self.assertIn("hugepagesz=64K", kernel_args(uboot))
        # a board is a real core: the chase picks its TLB model itself
        self.assertNotIn("neoverse-n1", test_steps(uboot)[-1])
        self.assertIn("--model auto", test_steps(uboot)[-1])
        qemu = kinds[("qemu", "arm64")]
        self.assertIn("--model neoverse-n1", test_steps(qemu)[-1])

    def test_qemu_boots_again_as_run_qemu_does(self):
        # The guest refuses a boot whose TSC TCG miscalibrated (exit 122):
        # LAVA must boot again as often as run-qemu.sh (clock_boots=N).
        boots = print_config()["clock_boots"]
        self.assertGreater(boots, 1)
        for path, (_, _, device, job) in self.jobs.items():
            if device == "qemu":
                with self.subTest(job=os.path.basename(path)):
                    self.assertEqual(job["actions"][1]["boot"].get("failure_retry"), boots)

    def test_refused(self):
        r = subprocess.run([sys.executable, "-m", "lava.job", "--arch", "arm64", "--device", "ipxe"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--device ipxe boots x86_64 only", r.stderr)

    def test_hardware_is_sized_for_the_board(self):
        """A board runs the native-sized plan (issue 30: the hardware job
        ran the TCG guest's, STREAM arrays of 8 MB each), for the board
        named, and says which in the job's metadata and @meta line."""
        out = os.path.join(self.tmp.name, "board.yaml")
        r = subprocess.run([sys.executable, "-m", "lava.job", "--device", "ipxe",
                            "--board", "16G,6", "--out", out], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("(the default)", r.stderr)
        with open(out) as f:
            job = yaml.safe_load(f)
        self.assertEqual(job["metadata"]["hugetlb.board"], "16G,6")
        run = test_steps(job)[-1]
        self.assertEqual(shlex.split(run)[3:],
                         ["--", "sh", "-c", run_py_command("quick", "x86_64", "--model", "auto",
                                                           "--board", "16G,6")[-1]])
        self.assertIn("--tasks 1,2,3,4,5,6 ", run)
        self.assertNotIn("/usr/local/bin/streamk --sizes %d " % (24 << 20), run)
        meta = json.loads(shlex.split(test_steps(job)[0])[1][len("@meta lava_job "):])
        self.assertEqual(meta["board"], "16G,6")
        # the default board is said once, with how to name the lab's
        ipxe = next(j for j in self.jobs.values() if j[:3] == ("quick", "x86_64", "ipxe"))[3]
        self.assertEqual(ipxe["metadata"]["hugetlb.board"], "8G,4")

    def test_board_refusals(self):
        for argv, words in (
                (["--device", "uboot", "--arch", "arm64", "--board", "4G,4"],
                 ["needs 8192 MB", "has 4G", "BOARD=MEM,CPUS"]),
                (["--device", "qemu", "--board", "8G,2"], ["--device qemu", "drop --board"]),
                (["--device", "ipxe", "--board", "8G"], ["--board 8G", "MEM,CPUS"])):
            with self.subTest(argv=argv):
                r = subprocess.run([sys.executable, "-m", "lava.job"] + argv, cwd=ROOT,
                                   capture_output=True, text=True, timeout=120)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertNotIn("Traceback", r.stderr)
                for w in words:
                    self.assertIn(w, r.stderr)


class LavaResults(unittest.TestCase):
    """The guest side: busybox sh and awk, lava-test-case replaced by echo."""
    SPEC = "chase:backing,hop,wss_bytes:ns_per_access:ns"
    LINES = ("@header chase backing,page_kb,hop,wss_bytes,ns_per_access\n"
             "@row chase devzero,4,line,16384,1.5\n"
             "@row chase thp,2048,line,16384,\n"
             "@exit chase 0\n"
             "ok 1 selftests: mm: hugetlb_dev\n"
             "# not ok 2 nested case\n"
             "ok 3 skipped one # SKIP no pool\n"
             "plain text\n")

    def run_it(self, rc):
        src = os.path.join(ROOT, "lava", "hugetlb-lava-results")
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write(self.LINES)
            f.flush()
            return subprocess.run(["busybox", "sh", src, "--metrics", self.SPEC, "--", "sh",
                                   "-c", "cat %s; exit %d" % (f.name, rc)],
                                  env=dict(os.environ, HUGETLB_LAVA_CASE="echo CASE"),
                                  capture_output=True, text=True, timeout=30)

    def test_cases(self):
        r = self.run_it(3)
        self.assertEqual(r.returncode, 3)
        out = r.stdout.splitlines()
        cases = [x[5:] for x in out if x.startswith("CASE ")]
        self.assertEqual(cases, [
            "chase.devzero.line.16384 --result pass --measurement 1.5 --units ns",
            "chase.thp.line.16384 --result skip",
            "chase.exit --result pass",
            "selftests__mm__hugetlb_dev --result pass",
            "nested_case --result fail",
            "skipped_one --result skip",
            "job --result fail"])
        # every line of the job passes through, in order
        self.assertEqual([x for x in out if not x.startswith("CASE ")],
                         self.LINES.splitlines())
        self.assertIn("job --result pass", self.run_it(0).stdout)



class UnbuiltKernel(unittest.TestCase):
    """make lava-job before make kernel: the job is written, with a warning
    naming the missing kernel and the command that builds it."""

    def test_warns_without_a_built_kernel_and_not_with_one(self):
        from lava import job as lava_job
        from bench import contract
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.object(lava_job, "ROOT", d):
            warning = lava_job.unbuilt_warning("x86_64")
            kernel = contract.GUEST_FILES["x86_64"][0]
            self.assertIn("%s is not built" % kernel, warning)
            self.assertIn("hugetlb.series=unknown", warning)
            self.assertIn("make kernel initramfs'", warning)
            self.assertIn("make kernel initramfs ARCH=arm64",
                          lava_job.unbuilt_warning("arm64"))
            os.makedirs(os.path.dirname(os.path.join(d, kernel)))
            with open(os.path.join(d, kernel + ".series"), "w") as f:
                f.write("devhugetlb-v4\n")
            self.assertIsNone(lava_job.unbuilt_warning("x86_64"))
            self.assertIn("hugetlb.series=devhugetlb-v4",
                          lava_job.kernel_args([], "qemu", "tcg", "x86_64"))


class Timeouts(unittest.TestCase):
    """The job's timeouts hold the run: its test action whole minutes
    rounded up from run-qemu.sh's seconds, the job every action's."""

    def test_rounded_up_and_summed(self):
        from lava import job as lava_job
        from bench import contract
        real = lava_job.qemu_config
        # a run of 150 s (2.5 minutes): 3 minutes, never 2
        with unittest.mock.patch.object(
                lava_job, "qemu_config",
                lambda cmd: dict(real(cmd), timeout_s=150)):
            for device in ("qemu", "ipxe"):
                args = lava_job.parse_args(["--profile", "tiny", "--device", device])
                doc = lava_job.job(args, contract.load())
                test = [a["test"] for a in doc["actions"] if "test" in a][0]
                self.assertEqual(test["timeout"]["minutes"], 3, device)
                boot = [a["boot"] for a in doc["actions"] if "boot" in a][0]
                deploy = [a["deploy"] for a in doc["actions"] if "deploy" in a][0]
                # deploy + boot + test + 5 minutes of slack
                self.assertEqual(doc["timeouts"]["job"]["minutes"],
                                 deploy["timeout"]["minutes"] +
                                 boot["timeout"]["minutes"] + 3 + 5, device)


if __name__ == "__main__":
    unittest.main()
