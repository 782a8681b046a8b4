"""Worker tuning runs in a fresh interpreter (it changes process-wide settings)."""

import platform
import subprocess
import sys

import pytest

SCRIPT = """
import gc
import sys
from switchgate.cli.worker_tuning import GC_THRESHOLDS, GIL_SWITCH_SECONDS, tune_worker
from switchgate.cli.worker_tuning import tune_malloc
malloc = tune_malloc()
tune_worker()
assert sys.getswitchinterval() == GIL_SWITCH_SECONDS
assert gc.get_threshold() == GC_THRESHOLDS, gc.get_threshold()
assert gc.get_freeze_count() > 1000, gc.get_freeze_count()
big = bytearray(600_000)  # above the mmap threshold: its own mapping, freed at once
del big
print(malloc)
"""


def test_worker_tuning() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    ).stdout.strip()
    if platform.libc_ver()[0] == "glibc":
        assert out == "True"
    else:
        pytest.skip("mallopt tuning applies to glibc only")
