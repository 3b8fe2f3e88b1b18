"""What `verify` is doing while it runs (docs/evidence.md, "Progress").

A required command may run for minutes; the report comes only at the end. pre-commit's
output is the model: on a terminal one line per command, redrawn with the elapsed time
while it runs and ending in its result; in a pipe or a CI log (no redrawing there) a line
when each command starts and one when it ends. It goes to stderr: stdout stays the report
(`--format json` stays one JSON document).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from harness_gate.report import safe

TICK_SECONDS = 1.0
WIDTH = 60  # the command shown is cut to this many characters


class Progress:
    def __init__(self, stream: TextIO, *, tty: bool) -> None:
        self.stream = stream
        self.tty = tty
        self.result = ""

    def _write(self, text: str) -> None:
        # A progress line that cannot be written (a closed pipe, a full disk) is not a
        # reason to stop verifying: the evidence and the report are what count.
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    @contextmanager
    def command(self, command_id: str, command: str) -> Iterator[Progress]:
        """Around one command's run; set `result` ("PASS 1.2s") before leaving."""
        shown = safe(command if len(command) <= WIDTH else command[: WIDTH - 3] + "...")
        head = f"{safe(command_id)} `{shown}`"
        self.result = ""
        start = time.monotonic()
        if not self.tty:
            self._write(f"[harness-gate] {head}: started\n")
            try:
                yield self
            finally:
                self._write(f"[harness-gate] {head}: {self.result or 'interrupted'}\n")
            return
        done = threading.Event()

        def tick() -> None:
            while not done.wait(TICK_SECONDS):
                self._write(f"\r{head} ... {time.monotonic() - start:.0f}s")

        self._write(f"{head} ... 0s")
        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield self
        finally:
            done.set()
            ticker.join()
            # \x1b[K clears what the running line held beyond the final one.
            self._write(f"\r\x1b[K{head} ... {self.result or 'interrupted'}\n")
