"""Start a local process, wait until it answers, stop it: the one way the project does it.

The local servers (Neo4j, Redis, a Redis Cluster), the benchmark's servers and the tests'
API and worker processes all start something and then poll it. A process that dies while
being waited for fails at once with the tail of its log, rather than after the whole
timeout with no reason; one that never answers fails at the deadline, also with its log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import httpx

Process = subprocess.Popen[bytes]


class ProcessFailed(RuntimeError):
    """A started process died, or did not answer in time; the message carries its log."""


def spawn(
    cmd: Sequence[str],
    log: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    append: bool = True,
) -> Process:
    """Start ``cmd`` in a session of its own, its output appended to ``log`` (or written over
    it, ``append=False``; or dropped, no log).

    Its own session: a Ctrl-C at the caller's terminal does not reach it (the caller stops
    it, in order), and ``stop(group=True)`` reaches the processes it starts in turn.
    """
    if log is None:
        return subprocess.Popen(
            list(cmd),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=None if env is None else dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab" if append else "wb") as out:  # the child holds its own descriptor
        return subprocess.Popen(
            list(cmd),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=None if env is None else dict(env),
            cwd=cwd,
            start_new_session=True,
        )


def tail(paths: Iterable[Path], lines: int = 30) -> str:
    """The last lines of each log, each under its name (a missing log is said to be so)."""
    parts = []
    for path in paths:
        try:
            text = "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except (FileNotFoundError, PermissionError):
            text = "(cannot be read)"
        parts.append(f"--- {path}\n{text}")
    return "\n".join(parts)


def wait_until(
    answers: Callable[[], bool],
    seconds: float,
    what: str,
    process: Process | None = None,
    *,
    logs: Iterable[Path] = (),
    every: float = 0.2,
) -> None:
    """Return once ``answers()`` is true; raise ``ProcessFailed`` naming ``what`` when
    ``process`` exits first or ``seconds`` pass, with the tail of ``logs``."""
    logs = list(logs)
    deadline = time.monotonic() + seconds
    while not answers():
        if process is not None and process.poll() is not None:
            raise ProcessFailed(f"{what} exited with {process.returncode}\n{tail(logs)}".strip())
        if time.monotonic() >= deadline:
            raise ProcessFailed(f"{what} did not answer within {seconds:g}s\n{tail(logs)}".strip())
        time.sleep(every)


def http_ok(url: str) -> bool:
    """One GET of ``url`` answers 200 (a server that refuses or resets is not up yet)."""
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def pid_alive(pid: int) -> bool:
    """A live process has this pid (a zombie, which has no command line, is not one)."""
    try:
        os.kill(pid, 0)
        return bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except (ProcessLookupError, PermissionError, FileNotFoundError):
        return False


def terminate(
    pid: int, alive: Callable[[], bool], seconds: float = 30.0, *, group: bool = False
) -> None:
    """SIGTERM, then SIGKILL when still ``alive()`` after ``seconds``. ``group``: every
    process of the pid's group (a server's worker processes)."""
    send = os.killpg if group else os.kill
    with contextlib.suppress(ProcessLookupError):
        send(pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive() or group:  # a group's stragglers too, once its leader is gone
        with contextlib.suppress(ProcessLookupError):
            send(pid, signal.SIGKILL)


def stop(process: Process | None, seconds: float = 30.0, *, group: bool = False) -> None:
    """Stop a process ``spawn`` started (``terminate``) and reap it; a stopped one or None
    is left as it is."""
    if process is None:
        return
    if process.poll() is None:
        terminate(process.pid, lambda: process.poll() is None, seconds, group=group)
    process.wait(timeout=seconds)
