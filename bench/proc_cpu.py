"""CPU time of a server process and its children, from ``/proc/<pid>/stat``: read around a
scenario, it gives the server's CPU per request (user + system, every worker process)."""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # the command name is in parentheses and may hold spaces: split after its closing one
    return text[text.rindex(")") + 2 :].split()


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def cpu_seconds(root: int) -> float:
    """User + system seconds used so far by ``root`` and its descendants: the live ones, and
    those that ended and were waited for (their time moves into their parent's cutime and
    cstime, so a child that ends between two readings, such as Redis's forked rewrite of
    its append-only file, never makes the second reading smaller)."""
    total = 0
    for pid in _tree(root):
        fields = _stat(pid)
        if fields is not None:
            # utime, stime, cutime, cstime (fields 14 to 17 of the stat line)
            total += sum(int(value) for value in fields[11:15])
    return total / _TICK


def listener(port: int) -> int | None:
    """The process listening on TCP ``port`` on this machine (its socket's inode, found among
    the processes' open files), or None."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{inode}]")
    if not inodes:
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(entry.name)
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    return None
