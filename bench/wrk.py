"""wrk, Debian's HTTP load generator, as the bench's second driver: C, one thread, keep-alive
connections, so what it measures is the server and not a Python client.

Installed with apt when missing and running as root, like the bench's PostgreSQL. Each run
sends one kind of request at a fixed number of connections for a fixed time, with the bench's
API key; follows go to a fresh follower per request (a counter in the script) and a target
drawn from the bench's list; reads may name the viewer they are made for (``X-Graph-Viewer``),
so they pay the privacy checks a product's reads pay. The figures are parsed from
``wrk --latency``'s report.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from graphsvc.domain.access import VIEWER_HEADER
from graphsvc.ops.servers.local_servers import ServerError, apt_install


class WrkError(RuntimeError):
    """wrk cannot be found, installed or run; the message says what to do."""


@dataclass(frozen=True)
class WrkResult:
    requests: int
    seconds: float
    per_second: float
    p50_us: float
    p99_us: float
    errors: int  # non-2xx answers and socket errors


def ensure_installed() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() != 0:
        raise WrkError("wrk is missing: run `sudo apt-get install -y wrk`")
    try:
        apt_install("wrk")
    except ServerError as exc:
        raise WrkError(str(exc)) from None
    found = shutil.which("wrk")
    if not found:
        raise WrkError("apt installed wrk but it is not on PATH")
    return found


def _script(api_key: str, method: str, paths: list[str], viewer: str = "") -> str:
    """A wrk script: the key (and the viewer, when one is named) on every request; ``paths``
    in turn (a ``{n}`` in a path becomes the request's own number, unique per run and
    connection thread)."""
    quoted = ",".join(f'"{p}"' for p in paths)
    named = f'wrk.headers["{VIEWER_HEADER}"] = "{viewer}"' if viewer else ""
    return f"""
wrk.method = "{method}"
wrk.headers["Authorization"] = "Bearer {api_key}"
{named}
local paths = {{{quoted}}}
local n = 0
request = function()
  n = n + 1
  local path = string.gsub(paths[(n % #paths) + 1], "{{n}}", tostring(n))
  return wrk.format(nil, path)
end
"""


_UNITS = {"us": 1.0, "ms": 1_000.0, "s": 1_000_000.0}


def _micros(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * _UNITS[unit]


def parse(report: str) -> WrkResult:
    """The figures of ``wrk --latency``'s report."""
    done = re.search(r"(\d+) requests in ([\d.]+)(ms|s)", report)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", report)
    p50 = re.search(r"^\s+50%\s+(\S+)", report, re.MULTILINE)
    p99 = re.search(r"^\s+99%\s+(\S+)", report, re.MULTILINE)
    if not (done and rate and p50 and p99):
        raise WrkError(f"cannot read wrk's report:\n{report}")
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", report))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", report)
    seconds = float(done.group(2)) / (1000 if done.group(3) == "ms" else 1)
    return WrkResult(
        requests=int(done.group(1)),
        seconds=seconds,
        per_second=float(rate.group(1)),
        p50_us=_micros(p50.group(1)),
        p99_us=_micros(p99.group(1)),
        errors=errors + (int(bad.group(1)) if bad else 0),
    )


def run(
    url: str,
    api_key: str,
    method: str,
    paths: list[str],
    *,
    connections: int,
    seconds: int = 10,
    viewer: str = "",
) -> WrkResult:
    """Drive ``url`` for ``seconds`` with ``connections`` keep-alive connections, one thread;
    ``viewer``: the user every request is read for (none: the key's own view)."""
    binary = ensure_installed()
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "bench.lua"
        script.write_text(_script(api_key, method, paths, viewer))
        load = ["-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
        cmd = [binary, *load, "-s", str(script), url]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    if result.returncode != 0:
        raise WrkError(f"wrk failed: {result.stderr or result.stdout}")
    return parse(result.stdout)
