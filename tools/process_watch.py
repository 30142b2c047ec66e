"""Waiting on a worker process that reports progress, and killing it when it stops moving: the
fuzzers run each batch of programs in a worker, so a hang in one program (a compiler loop, a
deadlock in a library) costs a batch, not the whole run."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any


def wait_unless_stalled(worker: subprocess.Popen[Any], progress: Callable[[], object], stall_s: float,
                        poll_s: float = 0.2) -> bool:
    """Wait for ``worker``; kill it and return True when ``progress()`` has not changed for
    ``stall_s`` seconds, else return False once it exits."""
    last, seen = time.monotonic(), None
    while worker.poll() is None:
        now, current = time.monotonic(), progress()
        if current != seen:
            seen, last = current, now
        elif now - last > stall_s:
            worker.kill()
            worker.wait()
            return True
        time.sleep(poll_s)
    return False
