"""Spawning a process and waiting for it: an answer ends the wait, a death fails it at once
with the log's tail, silence fails it at the deadline, and a stop ends even a process that
ignores SIGTERM."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from graphsvc.ops.servers import processes
from graphsvc.ops.servers.processes import ProcessFailed


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_process_that_answers_ends_the_wait(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    log = tmp_path / "answers.log"
    code = f"import pathlib, time; print('up', flush=True); pathlib.Path({str(ready)!r}).touch(); time.sleep(60)"
    process = processes.spawn(python(code), log)
    try:
        processes.wait_until(ready.exists, 30, "the answering process", process, logs=[log])
        assert process.poll() is None
        assert log.read_text() == "up\n"
    finally:
        processes.stop(process)
    assert process.returncode is not None


def test_a_process_that_dies_fails_the_wait_at_once_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "dies.log"
    code = "import sys; print('bad configuration: port taken', flush=True); sys.exit(3)"
    process = processes.spawn(python(code), log)
    with pytest.raises(ProcessFailed) as failed:
        processes.wait_until(lambda: False, 60, "the dying process", process, logs=[log])
    message = str(failed.value)
    # at once, not at the deadline: the wait says the process exited, not that time ran out
    assert message.startswith("the dying process exited with 3\n")
    assert "bad configuration: port taken" in message and str(log) in message


def test_a_process_that_never_answers_fails_at_the_deadline(tmp_path: Path) -> None:
    log = tmp_path / "silent.log"
    process = processes.spawn(python("import time; time.sleep(60)"), log)
    try:
        started = time.monotonic()
        with pytest.raises(ProcessFailed, match=r"^the silent process did not answer within 1s"):
            processes.wait_until(lambda: False, 1, "the silent process", process, logs=[log])
        assert time.monotonic() - started >= 1
        assert process.poll() is None  # the caller decides what to do with it
    finally:
        processes.stop(process)


def test_a_missing_log_is_named_not_raised(tmp_path: Path) -> None:
    with pytest.raises(ProcessFailed, match="cannot be read"):
        processes.wait_until(lambda: False, 0, "nothing", logs=[tmp_path / "absent.log"])


def test_stop_kills_a_process_that_ignores_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "stubborn.log"
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ignoring', flush=True); time.sleep(60)"
    )
    process = processes.spawn(python(code), log)
    processes.wait_until(lambda: "ignoring" in log.read_text(), 30, "the stubborn process")
    processes.stop(process, seconds=1)
    assert process.returncode == -9  # killed once the second of grace ran out


def test_stop_of_a_group_ends_the_children_too(tmp_path: Path) -> None:
    child_pid = tmp_path / "child.pid"
    child = "import time; time.sleep(60)"
    code = (
        f"import pathlib, subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', {child!r}]); "
        f"pathlib.Path({str(child_pid)!r}).write_text(str(p.pid)); time.sleep(60)"
    )
    process = processes.spawn(python(code))
    processes.wait_until(child_pid.exists, 30, "the parent", process)
    pid = int(child_pid.read_text())
    assert processes.pid_alive(pid)
    processes.stop(process, group=True)
    processes.wait_until(lambda: not processes.pid_alive(pid), 10, "the child's end")


def test_stop_leaves_a_finished_process_and_none_alone() -> None:
    process = processes.spawn(python("pass"))
    process.wait(timeout=30)
    processes.stop(process)
    processes.stop(None)
    assert process.returncode == 0
