"""Run the real backing servers on a machine without a Docker engine.

- Neo4j Community, resolved from Maven Central with Maven (``org.neo4j:neo4j``, which holds
  ``org.neo4j.server.CommunityEntryPoint``, the class the official launcher starts), copied
  into ``<state_dir>/neo4j/lib`` once, and started as a server process with a generated
  ``neo4j.conf``: Bolt on 127.0.0.1, data and logs under ``<state_dir>/neo4j``.
- Redis from Debian's ``redis-server`` (installed with apt when missing and running as root),
  on the project port, data under ``<state_dir>/redis``; or, with ``REDIS_CLUSTER=1``, a
  Redis Cluster of three masters on that port and the next two, joined with
  ``redis-cli --cluster create``, data under ``<state_dir>/redis-cluster``.

Both are idempotent: ``up`` leaves running servers alone, ``down`` ignores stopped ones.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

import redis
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable
from redis.backoff import NoBackoff
from redis.retry import Retry

from graphsvc.settings import PROJECT_ROOT, LocalServerSettings, Settings

Say = Callable[[str], None]

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>graphsvc.local</groupId>
  <artifactId>neo4j-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.neo4j</groupId>
      <artifactId>neo4j</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""

# What the official launcher passes to the JVM on Java 17 (Netty and the page cache need them).
_JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
]


class ServerError(RuntimeError):
    pass


def _pid_alive(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, 0)
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        return None
    # A zombie or a recycled pid of something else is not our server.
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return None
    return pid if cmdline else None


def _stop_pid(pid_file: Path, name: str, say: Say, timeout: float = 60.0) -> None:
    pid = _pid_alive(pid_file)
    if pid is None:
        say(f"{name}: not running")
        pid_file.unlink(missing_ok=True)
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _pid_alive(pid_file):
        time.sleep(0.2)
    if _pid_alive(pid_file):
        os.kill(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    say(f"{name}: stopped (pid {pid})")


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return f"({path} does not exist)"


def _is_loopback(host: str | None) -> bool:
    return host in {"127.0.0.1", "localhost", "::1"}


class LocalNeo4j:
    def __init__(self, settings: Settings, local: LocalServerSettings) -> None:
        self.settings = settings
        self.local = local
        self.home = local.state_dir / "neo4j"
        # Jars depend on the version only, so every local instance (dev, bench) shares them.
        self.lib = PROJECT_ROOT / ".local" / "jars" / f"neo4j-{local.neo4j_version}"
        self.conf = self.home / "conf"
        self.data = self.home / "data"
        self.logs = self.home / "logs"
        self.pid_file = self.home / "run" / "neo4j.pid"
        uri = urlparse(settings.neo4j_uri)
        self.host, self.port = uri.hostname, uri.port or 7687

    @property
    def address(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def _java(self) -> str:
        home = self.local.java_home or os.environ.get("JAVA_HOME")
        java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
        if not java or not Path(java).exists():
            raise ServerError("Java 17 is needed to run Neo4j: install openjdk-17-jre-headless")
        out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
        match = re.search(r'version "(\d+)', out)
        if not match or int(match.group(1)) not in (17, 21):
            raise ServerError(f"Neo4j 5.26 runs on Java 17 or 21; {java} says: {out.strip()}")
        return java

    def resolve(self, say: Say) -> None:
        """Fetch the Neo4j jars from Maven Central once; later runs reuse them."""
        marker = self.lib / f".resolved-{self.local.neo4j_version}"
        if marker.exists():
            return
        mvn = shutil.which("mvn")
        if not mvn:
            raise ServerError("Maven is needed to fetch Neo4j from Maven Central: install maven")
        say(f"neo4j: resolving org.neo4j:neo4j:{self.local.neo4j_version} from Maven Central")
        self.lib.parent.mkdir(parents=True, exist_ok=True)
        pom = self.lib.parent / f"neo4j-{self.local.neo4j_version}.pom.xml"
        pom.write_text(_POM.format(version=self.local.neo4j_version))
        shutil.rmtree(self.lib, ignore_errors=True)
        started = time.monotonic()
        cmd = [
            mvn,
            "-B",
            "-q",
            "-ntp",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={self.lib}",
            "-DincludeScope=runtime",
        ]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise ServerError(f"Maven could not resolve Neo4j:\n{result.stdout}\n{result.stderr}")
        jars = len(list(self.lib.glob("*.jar")))
        marker.write_text("ok\n")
        say(f"neo4j: {jars} jars in {self.lib} ({time.monotonic() - started:.0f}s)")

    def configure(self) -> None:
        for folder in (self.conf, self.data, self.logs, self.pid_file.parent, self.home / "import"):
            folder.mkdir(parents=True, exist_ok=True)
        settings = {
            "server.directories.data": self.data,
            "server.directories.logs": self.logs,
            "server.directories.run": self.pid_file.parent,
            "server.directories.import": self.home / "import",
            "server.default_listen_address": "127.0.0.1",
            "server.bolt.listen_address": f"127.0.0.1:{self.port}",
            "server.bolt.advertised_address": f"127.0.0.1:{self.port}",
            "server.http.enabled": "false",
            "server.https.enabled": "false",
            "server.memory.pagecache.size": self.local.neo4j_pagecache,
            "dbms.security.auth_enabled": "true",
            "dbms.usage_report.enabled": "false",
            "db.tx_log.rotation.retention_policy": "2 files",
            # Bolt waits 5 s for its threads and 5 s for its connections when stopping, after
            # the databases stopped; a restart for a bulk import need not.
            "internal.server.bolt.thread_pool_shutdown_wait_time": "0s",
            "internal.server.bolt.connection_shutdown_wait_time": "0s",
        }
        text = "".join(f"{key}={value}\n" for key, value in settings.items())
        (self.conf / "neo4j.conf").write_text(
            "# generated by graphsvc; edits are overwritten\n" + text
        )

    def _env(self) -> dict[str, str]:
        return {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf)}

    def _set_initial_password(self, java: str) -> None:
        if (self.data / "dbms" / "auth.ini").exists():
            return
        cmd = [
            java,
            "-cp",
            f"{self.lib}/*",
            "org.neo4j.cli.AdminTool",
            "dbms",
            "set-initial-password",
            self.settings.neo4j_password,
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, env=self._env())
        if result.returncode != 0:
            raise ServerError(f"could not set the Neo4j password:\n{result.stdout}{result.stderr}")

    def answers(self) -> bool:

        auth = (self.settings.neo4j_user, self.settings.neo4j_password)
        try:
            with GraphDatabase.driver(self.address, auth=auth, connection_timeout=2) as driver:
                driver.verify_connectivity()
            return True
        except AuthError as exc:
            raise ServerError(
                f"Neo4j at {self.address} rejects NEO4J_USER/NEO4J_PASSWORD: {exc}. "
                f"Stop it and remove {self.data} to start over."
            ) from exc
        except (ServiceUnavailable, Neo4jError, OSError):
            return False

    def owned(self) -> bool:
        """A server started from this home runs (its pid file names a live process)."""
        return _pid_alive(self.pid_file) is not None

    def up(self, say: Say) -> None:
        if not _is_loopback(self.host):
            say(f"neo4j: NEO4J_URI points at {self.host}; not starting a local server")
            return
        if self.answers():
            theirs = "" if self.owned() else f" (not the one of {self.home}: using it)"
            say(f"neo4j: running at {self.address}{theirs}")
            return
        java = self._java()
        self.resolve(say)
        self.configure()
        self._set_initial_password(java)
        cmd = [
            java,
            f"-Xms{self.local.neo4j_heap}",
            f"-Xmx{self.local.neo4j_heap}",
            *_JVM_FLAGS,
            "-cp",
            f"{self.lib}/*",
            "org.neo4j.server.CommunityEntryPoint",
            f"--home-dir={self.home}",
            f"--config-dir={self.conf}",
        ]
        console = (self.logs / "console.log").open("ab")
        process = subprocess.Popen(
            cmd,
            stdout=console,
            stderr=subprocess.STDOUT,
            cwd=self.home,
            env=self._env(),
            start_new_session=True,
        )
        self.pid_file.write_text(f"{process.pid}\n")
        say(f"neo4j: starting {self.local.neo4j_version} (pid {process.pid}), waiting for Bolt")
        deadline = time.monotonic() + self.local.neo4j_start_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise ServerError(
                    f"Neo4j exited with {process.returncode}:\n{_tail(self.logs / 'console.log')}"
                )
            if self.answers():
                say(f"neo4j: running at {self.address}")
                return
            time.sleep(0.5)
        raise ServerError(
            f"Neo4j did not answer on Bolt in time:\n{_tail(self.logs / 'neo4j.log')}"
        )

    def down(self, say: Say) -> None:
        _stop_pid(self.pid_file, "neo4j", say)

    def managed(self) -> bool:
        """True when NEO4J_URI is a server this project started (and may stop and restart)."""
        return _is_loopback(self.host) and _pid_alive(self.pid_file) is not None

    def import_csv(
        self,
        nodes: Path,
        relationships: Path,
        say: Say,
        imported: Callable[[], None] | None = None,
    ) -> None:
        """Replace the database with CSV files through Neo4j's offline importer, then restart.

        For an empty database only: the importer writes a new store, far faster than
        transactions, but needs the server stopped. The server is restarted either way. Node
        files carry integer import ids (``:ID``, not stored), which the importer maps fastest.
        ``imported`` is called once the import succeeded, before the server starts.
        """
        java = self._java()
        self.down(say)
        # The database name goes first: the file options take any number of values.
        cmd = [java, "-cp", f"{self.lib}/*", "org.neo4j.cli.AdminTool", "database", "import",
               "full", self.settings.neo4j_database, "--overwrite-destination=true",
               "--id-type=integer", f"--threads={os.cpu_count() or 1}",
               "--high-parallel-io=on", f"--report-file={self.home / 'import.report'}",
               f"--nodes=User={nodes}",
               f"--relationships=FOLLOWS={relationships}"]  # fmt: skip
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, env=self._env())
            if result.returncode == 0 and imported is not None:
                imported()
        finally:
            self.up(say)
        if result.returncode != 0:
            raise ServerError(
                f"neo4j-admin import failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
            )
        summary = [line for line in result.stdout.splitlines() if line.startswith("IMPORT DONE")]
        say(f"neo4j: {summary[0] if summary else 'import done'}")

    def status(self) -> str:
        pid = _pid_alive(self.pid_file)
        answering = _is_loopback(self.host) and self.answers()
        return f"neo4j: {'up' if answering else 'down'} at {self.address}" + (
            f" (pid {pid})" if pid else ""
        )


class LocalRedis:
    def __init__(self, settings: Settings, local: LocalServerSettings) -> None:
        self.settings = settings
        self.home = local.state_dir / "redis"
        self.pid_file = self.home / "redis.pid"
        url = urlparse(settings.redis_url)
        self.host, self.port = url.hostname, url.port or 6379

    def _binary(self, say: Say) -> str:
        found = shutil.which("redis-server")
        if found:
            return found
        if os.geteuid() != 0:
            raise ServerError("redis-server is missing: run `sudo apt-get install -y redis-server`")
        say("redis: installing Debian's redis-server with apt")
        apt_install("redis-server")
        found = shutil.which("redis-server")
        if not found:
            raise ServerError("apt installed redis-server but it is not on PATH")
        return found

    def answers(self) -> bool:

        try:
            client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1)
            with client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def up(self, say: Say) -> None:
        if not _is_loopback(self.host):
            say(f"redis: REDIS_URL points at {self.host}; not starting a local server")
            return
        if self.answers():
            say(f"redis: running at 127.0.0.1:{self.port}")
            return
        binary = self._binary(say)
        self.home.mkdir(parents=True, exist_ok=True)
        conf = self.home / "redis.conf"
        conf.write_text(
            "# generated by graphsvc; edits are overwritten\n"
            f"bind 127.0.0.1\nport {self.port}\nprotected-mode yes\n"
            f"dir {self.home}\npidfile {self.pid_file}\nlogfile {self.home / 'redis.log'}\n"
            "daemonize yes\nappendonly yes\nappendfsync everysec\n"
            # The mirror holds exact counts, not disposable cache entries: never evict.
            "maxmemory-policy noeviction\n"
            # Timeline inboxes (FEED_INBOX_CAP = 800 posts) stay compact listpacks.
            "zset-max-listpack-entries 1024\n"
        )
        result = subprocess.run([binary, str(conf)], capture_output=True, text=True)
        if result.returncode != 0:
            raise ServerError(f"redis-server failed: {result.stdout}{result.stderr}")
        # A large append-only file takes a while to load (13 s for 1.2 GB here); Redis answers
        # LOADING until it is done.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.answers():
                say(f"redis: running at 127.0.0.1:{self.port}")
                return
            time.sleep(0.1)
        raise ServerError(f"Redis did not answer in time:\n{_tail(self.home / 'redis.log')}")

    def down(self, say: Say) -> None:
        _stop_pid(self.pid_file, "redis", say)

    def status(self) -> str:
        pid = _pid_alive(self.pid_file)
        state = "up" if self.answers() else "down"
        return f"redis: {state} at 127.0.0.1:{self.port}" + (f" (pid {pid})" if pid else "")


class LocalRedisCluster:
    """Three masters (no replicas) on REDIS_URL's port and the next two: the smallest real
    cluster, enough to prove that no command or script mixes the keys of two slots."""

    NODES = 3

    def __init__(self, settings: Settings, local: LocalServerSettings) -> None:
        self.settings = settings
        self.home = local.state_dir / "redis-cluster"
        url = urlparse(settings.redis_url)
        self.host, first = url.hostname, url.port or 6379
        self.ports = [first + n for n in range(self.NODES)]
        self.single = LocalRedis(settings, local)  # for its binary lookup

    def _pid_file(self, port: int) -> Path:
        return self.home / str(port) / "redis.pid"

    def _info(self, port: int) -> dict[str, str]:
        """The node's CLUSTER INFO; empty when it does not answer (asked once, no retries)."""

        try:
            client = redis.Redis(
                host="127.0.0.1", port=port, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
            )
            with client:
                text = client.execute_command("CLUSTER INFO")
        except redis.RedisError:
            return {}
        if isinstance(text, bytes):
            text = text.decode()
        if isinstance(text, dict):  # some redis-py versions parse the reply
            return {str(k): str(v) for k, v in text.items()}
        return dict(line.split(":", 1) for line in text.split() if ":" in line)

    def healthy(self) -> bool:
        return all(self._info(port).get("cluster_state") == "ok" for port in self.ports)

    def _start(self, binary: str, port: int) -> None:
        home = self.home / str(port)
        home.mkdir(parents=True, exist_ok=True)
        conf = home / "redis.conf"
        conf.write_text(
            "# generated by graphsvc; edits are overwritten\n"
            f"bind 127.0.0.1\nport {port}\nprotected-mode yes\n"
            f"dir {home}\npidfile {self._pid_file(port)}\nlogfile {home / 'redis.log'}\n"
            "daemonize yes\nappendonly yes\nappendfsync everysec\n"
            "maxmemory-policy noeviction\n"
            "zset-max-listpack-entries 1024\n"
            # nodes.conf (relative to dir) keeps the node's identity and slots across restarts
            "cluster-enabled yes\ncluster-config-file nodes.conf\ncluster-node-timeout 5000\n"
            # the bus port is port + 10 rather than Redis's port + 10000, which could land in the
            # kernel's ephemeral range (32768-60999) and be taken by some client connection
            f"cluster-port {port + 10}\n"
        )
        result = subprocess.run([binary, str(conf)], capture_output=True, text=True)
        if result.returncode != 0:
            raise ServerError(f"redis-server failed on port {port}: {result.stdout}{result.stderr}")

    def _wait(self, test: Callable[[], bool], seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if test():
                return
            time.sleep(0.2)
        logs = "\n".join(_tail(self.home / str(p) / "redis.log", 10) for p in self.ports)
        raise ServerError(f"Redis Cluster: {what} did not happen in time:\n{logs}")

    def up(self, say: Say) -> None:
        if not _is_loopback(self.host):
            say(f"redis-cluster: REDIS_URL points at {self.host}; not starting a local cluster")
            return
        if self.healthy():
            say(f"redis-cluster: running at 127.0.0.1:{self.ports[0]}-{self.ports[-1]}")
            return
        binary = self.single._binary(say)
        for port in self.ports:
            if not self._info(port):
                self._start(binary, port)
        self._wait(lambda: all(self._info(p) for p in self.ports), 30, "start")
        assigned = [int(self._info(p).get("cluster_slots_assigned", "0")) for p in self.ports]
        if not any(assigned):  # new nodes: join them (restarted ones rejoin from nodes.conf)
            cli = shutil.which("redis-cli")
            if not cli:
                raise ServerError("redis-cli is missing: install Debian's redis-tools")
            cmd = [cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                   "--cluster-replicas", "0", "--cluster-yes"]  # fmt: skip
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if result.returncode != 0:
                raise ServerError(
                    f"redis-cli --cluster create failed:\n{result.stdout}{result.stderr}"
                )
            say(f"redis-cluster: created over ports {self.ports}")
        elif min(assigned) < 16384:
            raise ServerError(
                f"Redis Cluster under {self.home} is half made (slots {assigned}): "
                f"stop it and remove that folder to start over"
            )
        self._wait(self.healthy, 60, "cluster_state:ok")
        say(f"redis-cluster: running at 127.0.0.1:{self.ports[0]}-{self.ports[-1]}")

    def down(self, say: Say) -> None:
        for port in self.ports:
            _stop_pid(self._pid_file(port), f"redis-cluster:{port}", say)

    def status(self) -> str:
        pids = [_pid_alive(self._pid_file(port)) for port in self.ports]
        states = {p: self._info(p).get("cluster_state", "down") for p in self.ports}
        return f"redis-cluster: {states}" + (f" (pids {pids})" if any(pids) else "")


def local_redis(settings: Settings, local: LocalServerSettings) -> LocalRedis | LocalRedisCluster:
    kind = LocalRedisCluster if settings.redis_cluster else LocalRedis
    return kind(settings, local)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def up(settings: Settings, local: LocalServerSettings, say: Say = _say) -> None:
    local_redis(settings, local).up(say)
    LocalNeo4j(settings, local).up(say)


def down(settings: Settings, local: LocalServerSettings, say: Say = _say) -> None:
    LocalNeo4j(settings, local).down(say)
    local_redis(settings, local).down(say)


def status(settings: Settings, local: LocalServerSettings) -> list[str]:
    return [LocalNeo4j(settings, local).status(), local_redis(settings, local).status()]


def apt_install(package: str) -> None:
    """Install one of Debian's packages with apt (as root); a failure is a ServerError that
    names the command and carries its output."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]):
        result = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise ServerError(f"{' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")
