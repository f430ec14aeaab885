"""A one-node SLURM cluster on this machine, for the cluster tests (tests/cluster/, ``make test-cluster``).

Debian's SLURM 22.05 with its accounting daemon (the SLURM executor plugin asks ``sacct`` for the jobs' states,
which needs slurmdbd), MariaDB for slurmdbd, and munge for their authentication. Everything runs as root and
listens on 127.0.0.1 only, on free ports; every file (configs, the munge key, state, spool, logs, the database)
is in the cluster's own folder, and the daemons are this process's children, stopped by :meth:`SlurmCluster.stop`
whatever happened. The clients (``sbatch``, ``sinfo``, ``sacct``) find the cluster through ``SLURM_CONF``
(:attr:`SlurmCluster.env`). Missing packages are installed with apt-get (as root; ``ensure_packages``).

Run it by hand: ``python tests/cluster/slurm.py FOLDER`` starts the cluster, prints its ``SLURM_CONF`` and
waits until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

#: the Debian packages, and a program of each that shows it is installed
PACKAGES = {"slurm-wlm": "slurmctld", "slurmdbd": "slurmdbd", "munge": "munged", "mariadb-server": "mariadbd"}
#: the cluster's names: its partition and account are the ones profiles/slurm/config.yaml names
CLUSTER, PARTITION, ACCOUNT = "hlmtest", "hlm", "hlm"
TIMEOUT = 60  # seconds, for a daemon to come up


def ensure_packages() -> None:
    """Install Debian's SLURM, slurmdbd, munge and MariaDB where a program of theirs is missing (needs root)."""
    missing = [pkg for pkg, program in PACKAGES.items() if not shutil.which(program, path=_sbin_path())]
    if not missing:
        return
    if os.geteuid() != 0:
        raise RuntimeError(f"the cluster tests need {', '.join(missing)} (apt-get install as root)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], check=True, env=env)


def _sbin_path() -> str:
    return os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _total_memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


class SlurmCluster:
    """One node (this machine's cores, its memory less 1 GB), one partition, accounting; see the module."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.host = socket.gethostname().split(".")[0]
        self.cpus = len(os.sched_getaffinity(0))
        self.memory_mb = _total_memory_mb() - 1024
        self.procs: list[tuple[str, subprocess.Popen]] = []

    # ----------------------------------------------------------------- paths and environment
    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """What a client of this cluster needs in its environment."""
        path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin"])
        return {"SLURM_CONF": str(self.conf), "USER": os.environ.get("USER", "root"), "PATH": path}

    def run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        """A SLURM client command against this cluster."""
        return subprocess.run(cmd, env={**os.environ, **self.env}, capture_output=True, text=True, check=check,
                              timeout=TIMEOUT)

    # ----------------------------------------------------------------- start and stop
    def start(self) -> SlurmCluster:
        ensure_packages()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        r = self.root
        for sub in ("state", "spool", "db", "log"):
            (r / sub).mkdir(parents=True, exist_ok=True)
        r.chmod(0o711)  # munged: the socket's folder must be searchable by all
        key = r / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        munge_socket = r / "munge.socket"
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={munge_socket}", f"--key-file={key}",
                               f"--log-file={r / 'log/munged.log'}", f"--pid-file={r / 'munged.pid'}",
                               f"--seed-file={r / 'munged.seed'}"])
        self._wait("munged", lambda: munge_socket.exists())

        db_port, dbd_port, ctld_port, d_port = (free_port() for _ in range(4))
        subprocess.run(["mariadb-install-db", "--user=root", f"--datadir={r / 'db'}",
                        "--auth-root-authentication-method=socket"], check=True, capture_output=True)
        db_socket = r / "mysql.sock"
        self._spawn("mariadbd", ["mariadbd", "--no-defaults", "--user=root", f"--datadir={r / 'db'}",
                                 f"--socket={db_socket}", f"--pid-file={r / 'mysql.pid'}",
                                 "--bind-address=127.0.0.1", f"--port={db_port}", f"--log-error={r / 'log/mysql.err'}",
                                 "--skip-name-resolve", "--innodb-buffer-pool-size=256M"])
        self._wait("mariadbd", lambda: db_socket.exists() and subprocess.run(
            ["mariadb", f"--socket={db_socket}", "-uroot", "-e", "select 1"], capture_output=True).returncode == 0)
        subprocess.run(["mariadb", f"--socket={db_socket}", "-uroot", "-e",
                        "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'hlmtest';"
                        "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;"],
                       check=True, capture_output=True)

        dbd_conf = r / "slurmdbd.conf"  # beside slurm.conf, where slurmdbd looks for it
        dbd_conf.write_text(f"""\
AuthType=auth/munge
AuthInfo=socket={munge_socket}
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser=root
LogFile={r / 'log/slurmdbd.log'}
PidFile={r / 'slurmdbd.pid'}
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser=slurm
StoragePass=hlmtest
StorageLoc=slurm_acct_db
""")
        dbd_conf.chmod(0o600)
        self.conf.write_text(f"""\
ClusterName={CLUSTER}
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
CommunicationParameters=NoInAddrAny
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'slurmctld.pid'}
SlurmdPidFile={r / 'slurmd.pid'}
SlurmctldLogFile={r / 'log/slurmctld.log'}
SlurmdLogFile={r / 'log/slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# memory: slurmstepd samples every job step's RSS each second and kills a step over its --mem
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
AccountingStoragePass={munge_socket}
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
MinJobAge=600
KillWait=5
NodeName={self.host} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""")
        self._spawn("slurmdbd", ["slurmdbd", "-D"])
        self._wait("slurmdbd", lambda: self.run("sacctmgr", "-n", "list", "cluster", check=False).returncode == 0)
        self.run("sacctmgr", "-i", "add", "cluster", CLUSTER)
        self.run("sacctmgr", "-i", "add", "account", ACCOUNT, f"Cluster={CLUSTER}")
        self.run("sacctmgr", "-i", "add", "user", self.env["USER"], f"Account={ACCOUNT}", f"Cluster={CLUSTER}")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
        self._wait("slurmctld", lambda: self.run("sinfo", "-h", check=False).returncode == 0)
        self._spawn("slurmd", ["slurmd", "-D", "-N", self.host])
        self._wait("the node idle", lambda: self.run("sinfo", "-h", "-o", "%T", check=False).stdout.strip() == "idle")

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / "log" / f"{name}.out", "w")  # noqa: SIM115 (closed with the process)
        program = shutil.which(cmd[0], path=_sbin_path()) or cmd[0]
        proc = subprocess.Popen([program, *cmd[1:]], env={**os.environ, **self.env}, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.procs.append((name, proc))

    def _wait(self, what: str, ready) -> None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} ended (status {proc.returncode}) before {what} was ready: "
                                       f"see {self.root / 'log'}")
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{what} not ready after {TIMEOUT} s: see {self.root / 'log'}")

    def stop(self) -> None:
        """Cancel every job, then stop the daemons in the reverse order of their start (TERM, then KILL)."""
        if any(name == "slurmctld" and proc.poll() is None for name, proc in self.procs):
            self.run("scancel", "--full", "--user", self.env["USER"], check=False)
        for _name, proc in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        # job steps that outlived slurmd (slurmstepd runs in its own session)
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if (entry / "comm").read_text().strip() == "slurmstepd" and str(self.root) in (
                            entry / "environ").read_bytes().decode(errors="replace"):
                        os.kill(int(entry.name), signal.SIGKILL)
        self.procs.clear()

    def __enter__(self) -> SlurmCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "slurm-cluster")
    with SlurmCluster(folder) as cluster:
        print(f"export SLURM_CONF={cluster.conf}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
