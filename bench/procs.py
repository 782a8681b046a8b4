"""Child processes for a benchmark run: start pinned to CPUs, wait until ready, stop,
and read their CPU time and memory from /proc."""

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pin_self(cpus: set[int]) -> None:
    if cpus:
        os.sched_setaffinity(0, cpus)


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    started: float = field(default_factory=time.perf_counter)
    ready_after: float | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def pids(self) -> list[int]:
        """This process and all its descendants (uvicorn/gunicorn workers)."""
        return [self.pid, *descendants(self.pid)]

    def worker_pids(self) -> list[int]:
        """The processes that serve requests: the leaves of the process tree."""
        tree = self.pids()
        parents = {ppid(p) for p in tree}
        return [p for p in tree if p not in parents] or [self.pid]

    def cpu_seconds(self) -> float:
        return sum(cpu_seconds(p) for p in self.pids())

    def wait_ready(self, url: str, timeout: float = 60.0) -> float:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited early:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=1.0) as response:
                    if response.status == 200:
                        self.ready_after = time.perf_counter() - self.started
                        return self.ready_after
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"{self.name} not ready after {timeout}s:\n{tail}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                for pid in reversed(self.pids()):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.popen.wait()


def spawn(
    name: str, args: list[str], *, env: dict[str, str], cpus: set[int], log_path: Path, cwd: Path
) -> Proc:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handle = log_path.open("wb")

    def pin() -> None:
        if cpus:
            os.sched_setaffinity(0, cpus)

    popen = subprocess.Popen(
        args,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        preexec_fn=pin,  # noqa: PLW1509 - no threads here
    )
    return Proc(name, popen, log_path)


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        raw = f.read()
    return raw[raw.rindex(")") + 2 :].split()  # fields from 3 (state) on


def ppid(pid: int) -> int:
    try:
        return int(_stat_fields(pid)[1])
    except (OSError, ValueError):
        return 0


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            children.setdefault(ppid(int(entry)), []).append(int(entry))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, in seconds."""
    try:
        fields = _stat_fields(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


_MEMORY_FIELDS = {
    "VmRSS:": "rss_mb",  # resident now
    "VmHWM:": "hwm_mb",  # resident at its peak
    "RssAnon:": "anon_mb",  # of the resident: heap and other private memory
    "RssFile:": "file_mb",  # of the resident: mapped files (code, shared libraries)
}


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS (now), VmHWM (peak) and the anonymous / file-backed parts of VmRSS of one
    process, in MB."""
    out = dict.fromkeys(_MEMORY_FIELDS.values(), 0.0)
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = _MEMORY_FIELDS.get(line.split(maxsplit=1)[0]) if line.strip() else None
                if key:
                    out[key] = round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return out
