"""A real one-node Slurm cluster (munged, slurmctld, slurmd) in a temp dir, for root with
Debian's slurmctld slurmd slurm-client munge. Nothing in /etc/munge or /etc/slurm is used:
every path, port and socket is private, so clusters (or a system one) can live side by side."""
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path

BINARIES = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch")
# States after which a job never runs again; COMPLETING is not one: the epilog still runs.
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
         "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}


def skip_reason():
    """Why this machine cannot run the cluster, or None."""
    missing = [b for b in BINARIES if not os.access(b, os.X_OK)]
    if missing:
        return f"missing {', '.join(missing)} (apt-get install slurmctld slurmd slurm-client munge)"
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs as their users"
    return None


def require_slurm():
    import pytest  # here, so that the self-test below runs without it
    if skip_reason():
        pytest.skip(skip_reason())


def _die_with_parent():
    # Should the test process be killed before stop(), the daemons go too rather than
    # keep their ports and a pid file; 1 is PR_SET_PDEATHSIG.
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slurm:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []  # (name, Popen, log file), started in order, stopped in reverse
        self.proctrack = None
        self.submitted = 0
        self.conf = tmp / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.node = socket.gethostname().split(".")[0]
        # A socket path must fit in 108 bytes, which a pytest tmp_path may not: a short dir.
        self.sockdir = Path(tempfile.mkdtemp(prefix="munge-"))
        self.sockdir.chmod(0o755)  # as /run/munge: jobs of other users reach munged too
        self.munge_socket = self.sockdir / "munge.socket"

    def _spawn(self, name, args):
        log = open(self.tmp / f"{name}.out", "w")
        # A session of its own: a Ctrl-C in the test reaches the daemons only through stop().
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                start_new_session=True, preexec_fn=_die_with_parent)
        self.procs.append((name, proc, log))
        return proc

    def _logs(self):
        # The daemon's own log once it has opened one; before that, only its stderr has the error.
        out = ""
        for name in ("munged", "slurmctld", "slurmd"):
            log, err = self.tmp / f"{name}.log", self.tmp / f"{name}.out"
            path = log if log.exists() and log.stat().st_size else err
            if path.exists():
                lines = path.read_text(errors="replace").splitlines(True)
                out += f"--- {path.name}\n" + "".join(lines[-25:])
        return out

    def run(self, *args, check=True):
        return subprocess.run(args, env=self.env, capture_output=True, text=True,
                              check=check, timeout=30)

    def sbatch(self, script_text, **kw):
        """Submits a batch script; kw become options (cpus_per_task=1 -> --cpus-per-task=1)."""
        self.submitted += 1
        script = self.tmp / f"script-{self.submitted}.sh"
        shebang = "" if script_text.startswith("#!") else "#!/bin/sh\n"
        script.write_text(shebang + script_text)
        kw.setdefault("output", f"{self.tmp}/job-%j.out")  # what output() reads
        opts = [f"--{k.replace('_', '-')}" + ("" if v is True else f"={v}") for k, v in kw.items()]
        r = self.run("sbatch", "--parsable", *opts, str(script))
        return r.stdout.strip().split(";")[0]  # "id" or "id;cluster"

    def output(self, job_id):
        return (self.tmp / f"job-{job_id}.out").read_text(errors="replace")

    def job(self, job_id):
        """`scontrol show job` as a dict (one line per job with -o)."""
        out = self.run("scontrol", "-o", "show", "job", str(job_id)).stdout
        return dict(w.split("=", 1) for w in out.split() if "=" in w)

    def wait_done(self, job_id, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            state = self.job(job_id).get("JobState", "?")
            if state in FINAL:
                return state
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {state} after {timeout}s\n{self._logs()}")
            time.sleep(0.2)

    def _wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        state = "?"
        while time.monotonic() < deadline:
            for name, proc, _ in self.procs:
                if proc.poll() is not None:
                    return f"{name} exited with {proc.returncode}"
            r = self.run("sinfo", "-h", "-N", "-n", self.node, "-o", "%T", check=False)
            state = r.stdout.strip() or r.stderr.strip()
            if state == "idle":
                return None
            time.sleep(0.2)
        return f"node {self.node} is '{state}' after {timeout}s"

    def stop(self):
        if any(n.startswith("slurm") and p.poll() is None for n, p, _ in self.procs):
            self.run("scancel", "--full", f"--nodelist={self.node}", check=False)
        for name, proc, log in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
        self.procs = []
        # slurmstepd and the jobs are daemonized away from slurmd, so they are found by
        # the SLURM_CONF they inherited: ours alone, never another cluster's.
        mark = f"SLURM_CONF={self.conf}".encode()
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if mark in env and int(pid) != os.getpid():
                with suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(self.sockdir, ignore_errors=True)
        # proctrack/cgroup leaves an empty slurm_<node> dir in each v1 hierarchy it used;
        # rmdir fails (and is meant to) while another cluster still has jobs in it.
        for d in Path("/sys/fs/cgroup").glob(f"*/slurm_{self.node}"):
            with suppress(OSError):
                d.rmdir()


def _start_munged(s):
    key = s.tmp / "munge.key"
    key.write_bytes(secrets.token_bytes(1024))
    key.chmod(0o400)  # munged refuses a key that others can read
    proc = s._spawn("munged", [
        "/usr/sbin/munged", "--foreground", "--force",  # --force: runs as root
        f"--key-file={key}", f"--socket={s.munge_socket}", f"--pid-file={s.tmp / 'munged.pid'}",
        f"--log-file={s.tmp / 'munged.log'}", f"--seed-file={s.tmp / 'munged.seed'}"])
    deadline = time.monotonic() + 10
    while not s.munge_socket.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"munged did not start\n{s._logs()}")
        time.sleep(0.05)


def _write_conf(s, proctrack, epilog, gpu_files, task):
    t = s.tmp
    (t / "state").mkdir(exist_ok=True)
    # slurmd keeps each batch script in its spool, which the job's user (another than
    # root) must reach: beside the munge socket, not under pytest's private tmp.
    (s.sockdir / "spool").mkdir(exist_ok=True)
    # `slurmd -C` gives this machine's real CPUs, sockets, cores and memory.
    hw = subprocess.run(["/usr/sbin/slurmd", "-C"], capture_output=True, text=True,
                        check=True).stdout.splitlines()[0].split()
    hw = " ".join(w for w in hw if not w.startswith("NodeName="))
    lines = [
        "ClusterName=trainvitals",
        f"SlurmctldHost={s.node}(127.0.0.1)",  # must be our hostname: slurmctld checks it
        f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={s.munge_socket}",
        f"StateSaveLocation={t}/state", f"SlurmdSpoolDir={s.sockdir}/spool",
        f"SlurmctldPidFile={t}/slurmctld.pid", f"SlurmdPidFile={t}/slurmd.pid",
        f"SlurmctldLogFile={t}/slurmctld.log", f"SlurmdLogFile={t}/slurmd.log",
        "SlurmctldDebug=info", "SlurmdDebug=info",
        "MpiDefault=none", "ReturnToService=2",
        # CR_Core, not the default CR_Core_Memory: jobs without --mem would each take all
        # the memory and so never run side by side.
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        f"ProctrackType=proctrack/{proctrack}", f"TaskPlugin=task/{task}",
        # jobacct_gather/cgroup gives each job its cpuacct cgroup on cgroup v1.
        f"JobAcctGatherType=jobacct_gather/{'cgroup' if task == 'cgroup' else 'none'}",
        "AccountingStorageType=accounting_storage/none",
        "KillWait=2", "InactiveLimit=0",
        f"NodeName={s.node} NodeHostname={s.node} NodeAddr=127.0.0.1 {hw} State=UNKNOWN",
        f"PartitionName=gpu Nodes={s.node} Default=YES MaxTime=INFINITE State=UP",
    ]
    if gpu_files:
        # Slurm only needs distinct device files: /dev/null and /dev/zero make two fake GPUs
        # (task/none binds nothing), /dev/nvidia0 a real one. Jobs see SLURM_JOB_GPUS.
        lines[-2] = lines[-2].replace(" State=", f" Gres=gpu:{len(gpu_files)} State=")
        lines.append("GresTypes=gpu")
        (t / "gres.conf").write_text("".join(f"Name=gpu File={f}\n" for f in gpu_files))
    if epilog:
        script = t / "epilog.sh"
        script.write_text(epilog if epilog.startswith("#!") else "#!/bin/sh\n" + epilog)
        script.chmod(0o755)
        lines.append(f"Epilog={script}")
    s.conf.write_text("\n".join(lines) + "\n")
    # autodetect: cgroup/v2 where /sys/fs/cgroup is cgroup2, else the v1 controllers.
    # IgnoreSystemd: no systemd here to ask for a scope (v2 only; v1 ignores it).
    # task/cgroup gives the job its own memory and cpuset cgroups (proctrack/cgroup only
    # freezer's); memory is only limited to --mem where SelectTypeParameters counts memory.
    constrain = "ConstrainCores=yes\nConstrainRAMSpace=yes\n" if task == "cgroup" else ""
    (t / "cgroup.conf").write_text("CgroupPlugin=autodetect\nIgnoreSystemd=yes\n" + constrain)


def start_slurm(tmp_path, epilog=None, gpu_files=(), task_cgroup=False, timeout=30,
                proctracks=("cgroup", "linuxproc")):
    """Starts the cluster with the first of `proctracks` under which slurmd comes up.

    epilog: shell text run by slurmd as root after each job (Epilog=).
    task_cgroup: TaskPlugin=task/cgroup where proctrack/cgroup runs, else task/none."""
    tmp_path = Path(tmp_path)
    errors = []
    for proctrack in proctracks:
        t = tmp_path / f"slurm-{proctrack}"
        t.mkdir(parents=True, exist_ok=True)
        s = Slurm(t)
        try:
            _start_munged(s)
            s.task = "cgroup" if task_cgroup and proctrack == "cgroup" else "none"
            _write_conf(s, proctrack, epilog, gpu_files, s.task)
            s._spawn("slurmctld", ["/usr/sbin/slurmctld", "-D", "-i"])
            s._spawn("slurmd", ["/usr/sbin/slurmd", "-D", "-N", s.node])
            why = s._wait_idle(timeout)
        except Exception:
            s.stop()
            raise
        if why is None:
            s.proctrack = f"proctrack/{proctrack}"
            s.failed_proctrack = errors
            return s
        errors.append(f"proctrack/{proctrack}: {why}\n{s._logs()}")
        s.stop()
    raise RuntimeError("Slurm did not come up:\n" + "\n".join(errors))


if __name__ == "__main__":
    if skip_reason():
        sys.exit(f"skip: {skip_reason()}")
    JOB = "sleep 3; cat /proc/self/cgroup; env | grep -E '^(SLURM_|CUDA_)' | sort\n"
    with tempfile.TemporaryDirectory(prefix="slurm-selftest-") as d:
        seen = Path(d) / "epilog.txt"
        # Both epilogs run at once: one write each keeps their lines apart.
        epilog = ('out=$(echo "epilog for $SLURM_JOB_ID"; env | grep -E "^(SLURM_|CUDA_)" | sort;'
                  ' /usr/bin/scontrol show job "$SLURM_JOB_ID" | grep -o "StdOut=.*")\n'
                  f'echo "$out" >> {seen}\n')
        t0 = time.monotonic()
        cluster = start_slurm(d, epilog=epilog, gpu_files=("/dev/null", "/dev/zero"),
                              task_cgroup="--task-cgroup" in sys.argv)
        t1 = time.monotonic()
        try:
            print(f"started with {cluster.proctrack} task/{cluster.task}",
                  *cluster.failed_proctrack, sep="\n")
            jobs = [cluster.sbatch(JOB, gres="gpu:1"), cluster.sbatch(JOB, account="ml")]
            states = [cluster.wait_done(j, timeout=60) for j in jobs]
            t2 = time.monotonic()
            for j, st in zip(jobs, states):
                print(f"=== job {j}: {st}\n{cluster.output(j)}")
            print(f"=== epilog ran: {seen.exists()}", seen.exists() and seen.read_text())
            assert states == ["COMPLETED", "COMPLETED"], states
        finally:
            cluster.stop()
        print(f"start {t1 - t0:.1f}s, two jobs {t2 - t1:.1f}s, "
              f"end to end {time.monotonic() - t0:.1f}s")
