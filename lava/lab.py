# SPDX-License-Identifier: GPL-2.0
"""A LAVA lab on loopback, for make test-lava: its own PostgreSQL cluster,
lava-server (gunicorn), lava-scheduler, a lava-worker and one qemu device,
all in one private directory and configured from lava/lab/ (settings.yaml,
the device dictionary hugetlb-qemu01.jinja2).  tests/lava_server_test.py
(make test-lava) uses it: Lab().start(), then lavacli with lab.env, then
stop() and remove().

No service of the host's is used or changed: the cluster listens on a
unix socket in the private directory only (no TCP port), lava-server on
127.0.0.1 at a free port, the settings reach LAVA through LAVA_JSON_SETTINGS
(read after /etc/lava-server/, whose only file still used is the package's
env.yaml), the worker keeps its jobs under the private directory (lava-run
itself works in LAVA's /var/lib/lava/dispatcher/tmp/JOB and removes it).  Every process is started here and stopped by its process id
(stop(); also when starting fails).  The API token is only in lavacli's
configuration in the private directory (XDG_CONFIG_HOME), the worker's in
its token file there, the secret key only in the environment.
"""
import base64
import grp
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
PG_BIN = "/usr/lib/postgresql/15/bin"
WORKER = "hugetlb-lab-worker"
DEVICE = "hugetlb-qemu01"
ADMIN = "hugetlb-admin"
IDENTITY = "hugetlb-lab"


class LabError(Exception):
    """The lab could not start; the message names cause and fix."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """start() brings the lab up, stop() takes down what start() started;
    times holds each step's wall time in seconds."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="hugetlb-lava-")
        # The postgres user must reach its cluster below; nobody may list.
        os.chmod(self.dir, 0o711)
        for d in ("logs", "devices", "health-checks", "dispatcher.d",
                  "media", "config", "worker"):
            os.makedirs(os.path.join(self.dir, d), mode=0o700)
        self.port = free_port()
        self.url = "http://127.0.0.1:%d/" % self.port
        self.procs = []         # (name, Popen), in start order
        self.pg_pid = None
        self.times = {}
        self.env = self.lava_env()

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def lava_env(self):
        with open(os.path.join(HERE, "lab", "settings.yaml")) as f:
            settings = yaml.safe_load(f.read().replace("@DIR@", self.dir))
        settings["DATABASES"] = {"default": {
            "ENGINE": "django.db.backends.postgresql", "NAME": "lava",
            "USER": "lava", "HOST": self.path("pg-run"), "PORT": "5432"}}
        env = dict(os.environ)
        env.update(
            LAVA_JSON_SETTINGS=base64.b64encode(
                json.dumps(settings).encode()).decode(),
            SECRET_KEY=secrets.token_urlsafe(48),
            DJANGO_SETTINGS_MODULE="lava_server.settings.prod",
            XDG_CONFIG_HOME=self.path("config"))
        env.pop("DATABASE_URL", None)
        return env

    def timed(self, step, fn, *args):
        t = time.monotonic()
        try:
            return fn(*args)
        finally:
            self.times[step] = time.monotonic() - t

    def run(self, name, argv, user=None, stdin=None):
        """A command to its end, output to logs/NAME.log; its stdout."""
        if user:
            argv = ["runuser", "-u", user, "--"] + argv
        p = subprocess.run(argv, env=self.env, cwd=self.dir, input=stdin,
                           capture_output=True, text=True, timeout=900)
        with open(self.path("logs", name + ".log"), "a") as f:
            f.write("$ %s\n%s" % (" ".join(argv[:6]), p.stderr))
        if p.returncode:
            raise LabError("%s failed (exit %d): %s (see %s)" % (
                " ".join(argv[:4]), p.returncode, p.stderr.strip()[-500:],
                self.path("logs", name + ".log")))
        return p.stdout

    def manage(self, name, *args):
        return self.run(name, ["lava-server", "manage"] + list(args))

    def spawn(self, name, argv):
        log = open(self.path("logs", name + ".log"), "w")
        p = subprocess.Popen(argv, env=self.env, cwd=self.dir, stdout=log,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append((name, p))
        return p

    # -- the steps ------------------------------------------------------

    def postgres(self):
        """initdb and start a cluster on a socket in the private dir, as
        the postgres user when root (PostgreSQL refuses to run as root)."""
        if not os.path.exists(os.path.join(PG_BIN, "initdb")):
            raise LabError("no %s/initdb: run 'make deps' (postgresql)" % PG_BIN)
        user = "postgres" if os.geteuid() == 0 else None
        for d in ("pg", "pg-run"):
            os.makedirs(self.path(d), mode=0o700)
            if user:
                pw = pwd.getpwnam(user)
                os.chown(self.path(d), pw.pw_uid, pw.pw_gid)
        # trust: the socket's directory is the only way in, and only its
        # owner (and root) can enter it.
        self.run("postgres-initdb", [PG_BIN + "/initdb", "-D", self.path("pg"),
                                     "-U", "lava", "-A", "trust", "-E", "UTF8",
                                     "--locale", "C.UTF-8"], user)
        opts = "-c listen_addresses='' -c unix_socket_directories=%s " \
               "-c fsync=off" % self.path("pg-run")
        self.run("postgres", [PG_BIN + "/pg_ctl", "-D", self.path("pg"), "-w",
                              "-l", self.path("pg-run", "postgres.log"),
                              "-o", opts, "start"], user)
        with open(self.path("pg", "postmaster.pid")) as f:
            self.pg_pid = int(f.readline())
        self.run("postgres-createdb", [PG_BIN + "/createdb", "-h",
                                       self.path("pg-run"), "-U", "lava", "lava"], user)

    def database(self):
        self.manage("migrate", "migrate", "--noinput")

    def configure(self):
        """The device type, the worker, the device (its dictionary from
        lava/lab/), a superuser and its API token for lavacli."""
        shutil.copy(os.path.join(HERE, "lab", DEVICE + ".jinja2"),
                    self.path("devices"))
        self.manage("configure", "device-types", "add", "qemu")
        self.manage("configure", "workers", "add", WORKER)
        self.manage("configure", "devices", "add", "--device-type", "qemu",
                    "--worker", WORKER, DEVICE)
        # No health check job for the device: it is good as configured.
        self.manage("configure", "devices", "update", "--health", "GOOD", DEVICE)
        self.manage("configure", "users", "add", "--superuser", "--staff", ADMIN)
        token = self.manage("configure", "tokens", "add", "--user", ADMIN).strip()
        self.write_secret(self.path("config", "lavacli.yaml"), yaml.safe_dump(
            {IDENTITY: {"uri": self.url + "RPC2", "username": ADMIN,
                        "token": token}}))
        worker_token = self.manage("configure", "shell", "-c", (
            "from lava_scheduler_app.models import Worker; "
            "print(Worker.objects.get(hostname=%r).token)" % WORKER)).strip()
        self.write_secret(self.path("worker", "token"), worker_token)
        self.secrets = [token, worker_token, self.env["SECRET_KEY"]]

    @staticmethod
    def write_secret(path, text):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)

    def server(self):
        """gunicorn on 127.0.0.1:port, then wait until it answers."""
        self.spawn("gunicorn", ["gunicorn3", "lava_server.wsgi", "--bind",
                                "127.0.0.1:%d" % self.port, "--workers", "2",
                                "--timeout", "300", "--log-level", "info"])
        # As this user (not lavaserver) who alone can read the private
        # dir; no lava-publisher: the event URL is a port nobody serves.
        self.spawn("scheduler", ["lava-server", "manage", "lava-scheduler",
                                 "--level", "INFO", "--log-file",
                                 self.path("logs", "scheduler-lava.log"),
                                 "--user", pwd.getpwuid(os.geteuid()).pw_name,
                                 "--group", grp.getgrgid(os.getegid()).gr_name,
                                 "--event-url", "tcp://127.0.0.1:%d" % free_port()])
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(self.url + "api/v0.2/system/version/",
                                            timeout=10) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            self.check_alive()
            if time.monotonic() > deadline:
                raise LabError("lava-server did not answer at %s in 180 s "
                               "(see %s)" % (self.url, self.path("logs")))
            time.sleep(1)

    def worker(self):
        self.spawn("worker", ["lava-worker", "--name", WORKER, "--url", self.url,
                              "--worker-dir", self.path("worker"),
                              "--token-file", self.path("worker", "token"),
                              "--ping-interval", "5", "--level", "INFO",
                              "--log-file", self.path("logs", "worker-lava.log")])

    def check_alive(self):
        for name, p in self.procs:
            if p.poll() is not None:
                raise LabError("%s exited with status %d (see %s)" % (
                    name, p.returncode, self.path("logs", name + ".log")))

    def start(self):
        try:
            self.timed("postgres", self.postgres)
            self.timed("migrate", self.database)
            self.timed("configure", self.configure)
            self.timed("server", self.server)
            self.timed("worker", self.worker)
        except BaseException:
            self.stop()
            raise

    # -- stopping ---------------------------------------------------------

    def job_pids(self):
        """lava-run of the jobs the worker still runs (each leads its own
        process group, QEMU in it)."""
        db = self.path("worker", "db.sqlite3")
        if not os.path.exists(db):
            return []
        with sqlite3.connect(db) as c:
            # status 2: finished (lava_dispatcher.worker.Job.FINISHED)
            return [r[0] for r in c.execute(
                "SELECT pid FROM jobs WHERE status != 2") if r[0]]

    def stop(self):
        """Everything start() started, by process id, newest first."""
        for pid in self.job_pids():
            try:
                os.killpg(pid, signal.SIGTERM)
            except OSError:
                pass
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        if self.pg_pid:
            stop_pid(self.pg_pid, signal.SIGINT)    # fast shutdown
            self.pg_pid = None

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def stop_pid(pid, sig, wait=60):
    """Signal a process that is not our child and wait until it is gone."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)

