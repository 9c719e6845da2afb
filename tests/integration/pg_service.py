"""A real PostgreSQL server for the run history's tests and benchmark: Debian's server
(/usr/lib/postgresql/VERSION/bin), a data directory and socket in a temporary directory,
listening on a free port of 127.0.0.1, the superuser `postgres` with password PASSWORD.
initdb refuses root, so under root the server runs as the `postgres` system user."""
import glob
import os
import pathlib
import pwd
import shutil
import subprocess
import tempfile

from prom_services import free_port

PASSWORD = "tv-s3cret-pw"


def pg_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(pathlib.Path(p).parts[-3]))
    return pathlib.Path(found[-1]).parent if found else None


class Postgres:
    """One PostgreSQL server on 127.0.0.1:port, its data and socket in a temporary directory;
    started when made, stopped and removed by close()."""

    def __init__(self):
        self.bin = pg_bin()
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="tv-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_user = []
        try:
            if os.geteuid() == 0:  # initdb refuses root: the server runs as `postgres`
                owner = pwd.getpwnam("postgres")
                os.chown(self.root, owner.pw_uid, owner.pw_gid)
                # By its path: CI runs with only /usr/bin and /bin on PATH.
                runuser = next(p for p in ("/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser")
                               if os.path.exists(p))
                self.as_user = [runuser, "-u", "postgres", "--"]
            (self.root / "pw").write_text(PASSWORD + "\n")
            if self.as_user:
                os.chown(self.root / "pw", owner.pw_uid, owner.pw_gid)
            self.init_and_start()
        except BaseException:
            self.close()
            raise

    def init_and_start(self):
        # A password over TCP, as a team's server asks; none on the local socket.
        self.run("initdb", "-D", self.data, "-U", "postgres", "--auth-host=scram-sha-256",
                 "--auth-local=trust",
                 f"--pwfile={self.root / 'pw'}", "-E", "UTF8", "--locale=C.UTF-8",
                 "--no-sync")
        self.start()

    def run(self, tool, *args):
        p = subprocess.run([*self.as_user, str(self.bin / tool), *map(str, args)],
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "PGPASSWORD": PASSWORD})
        assert p.returncode == 0, f"{tool}: {p.stdout}{p.stderr}"
        return p

    def start(self):
        self.run("pg_ctl", "-D", self.data, "-l", self.root / "log", "-w", "-t", "30", "-o",
                 f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off",
                 "start")

    def stop(self):
        self.run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def url(self, db, password=PASSWORD, port=None):
        return f"postgresql://postgres:{password}@127.0.0.1:{port or self.port}/{db}"

    def socket_url(self, db):
        """The database `db` over the server's Unix socket (no password asked)."""
        return f"postgresql://postgres@/{db}?host={self.root}&port={self.port}"

    def psql(self, db, sql):
        """Runs `sql` in database `db` with psql, stopping at the first error."""
        return self.run("psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", self.port,
                        "-U", "postgres", "-d", db, "-c", sql)

    def createdb(self, name):
        self.run("createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres", name)
        return self.url(name)

    def close(self):
        subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m",
                        "immediate", "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


