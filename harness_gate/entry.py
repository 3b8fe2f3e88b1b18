"""The console script: `check` and `lint`, which the hooks run, then everything else.

`check` and the hook's `lint FILE...` are parsed here without click: importing click and
the other commands' modules is a fifth of the hook's start-up (docs/design.md, "Speed on
the hook path"). Only an argument list read exactly takes this path: anything else (help, another command, an
option given twice, a value click would refuse) goes to the click CLI, which owns usage
and help. Both paths end in `run`, which turns any error into a report with exit
code 2: the gate fails closed and never shows a traceback.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
import sys
from collections.abc import Sequence

from harness_gate.runs import OUTPUT_FORMATS, STAGES, check, run

TYPE_CHECKING = False  # typing itself is not imported: a few milliseconds of every hook
if TYPE_CHECKING:
    from typing import NoReturn

    from harness_gate.report import Report

# `check`'s options (cli.py declares the same for click): option -> (parameter, choices).
_VALUED: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "--stage": ("stage", STAGES),
    "--range": ("range_", None),
    "--base": ("base", None),
    "--head": ("head", None),
    "--plan": ("plan_id", None),
    "--config": ("config_file", None),
    "--format": ("fmt", OUTPUT_FORMATS),
}
_FLAGS = {"--staged": "staged", "--reverify": "reverify", "--landed": "landed"}
# The hook's own options, exactly: the only ones the lean path (lean.py) answers.
LEAN_OPTIONS: dict[str, str | bool] = {"stage": "pre-commit", "staged": True}


def check_options(argv: Sequence[str]) -> dict[str, str | bool] | None:
    """`check`'s options when `argv` is a `check` command read exactly; otherwise None,
    and click reads it (and reports whatever is wrong with it)."""
    if not argv or argv[0] != "check":
        return None
    options: dict[str, str | bool] = {}
    rest = iter(argv[1:])
    for arg in rest:
        name, eq, value = arg.partition("=")
        if name in _FLAGS and not eq:
            key: str = _FLAGS[name]
            options_value: str | bool = True
        elif name in _VALUED:
            key, choices = _VALUED[name]
            if not eq:
                value = next(rest, "")
            # An empty value, one that looks like an option, or a choice click would
            # refuse: click says what is wrong.
            if not value or value.startswith("-") or (choices is not None and value not in choices):
                return None
            if key == "config_file" and _click_refuses_path(value):
                return None
            options_value = value
        else:
            return None
        if key in options:
            return None  # given twice: click decides which counts
        options[key] = options_value
    return options


ARTIFACTS_ONLY = "--artifacts-only"


def lint_files(argv: Sequence[str]) -> tuple[list[str], bool] | None:
    """The FILEs of `lint [--artifacts-only] FILE...` as the lint hook runs it (names only,
    none of them empty or looking like an option), and whether `--artifacts-only` was
    given; otherwise None, and click reads it."""
    if not argv or argv[0] != "lint":
        return None
    artifacts_only = argv[1:2] == [ARTIFACTS_ONLY]
    files = list(argv[2 if artifacts_only else 1 :])
    if any(not name or name.startswith("-") for name in files):
        return None
    return files, artifacts_only


def lint(files: Sequence[str], *, artifacts_only: bool = False) -> NoReturn:
    """`harness-gate lint FILE...` in text, however its arguments were parsed."""

    def body() -> Report:
        from pathlib import Path  # noqa: PLC0415

        from harness_gate.commands import lint as lint_mod  # noqa: PLC0415

        return lint_mod.lint(Path.cwd(), files, artifacts_only=artifacts_only)

    run("lint", "text", body)


def _click_refuses_path(value: str) -> bool:
    """What `click.Path(dir_okay=False)` refuses: a directory, or a file it cannot read
    (a path that does not exist is accepted, and the check reports it)."""
    from pathlib import Path  # noqa: PLC0415

    try:
        st = Path(value).stat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) or not os.access(value, os.R_OK)


# Locks (fcntl), signals and process groups of POSIX, git hooks run by sh, ssh-keygen: the
# platforms harness-gate is built and tested on (README, "Supported platforms").
SUPPORTED = ("linux", "darwin")


def agent_runtime(argv: Sequence[str]) -> str | None:
    """The runtime of `agent-hook --runtime R` read exactly (the agent hook runs before
    every edit: no click); otherwise None, and click reads it."""
    from harness_gate.agent import RUNTIMES  # noqa: PLC0415

    if len(argv) == 3 and argv[0] == "agent-hook" and argv[1] == "--runtime" and argv[2] in RUNTIMES:
        return argv[2]
    if len(argv) == 2 and argv[0] == "agent-hook" and argv[1].startswith("--runtime="):
        runtime = argv[1].partition("=")[2]
        return runtime if runtime in RUNTIMES else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    if not sys.platform.startswith(SUPPORTED):
        sys.stderr.write(f"harness-gate: {sys.platform} is not supported (Linux and macOS are; on Windows, use WSL)\n")
        return 2
    args = list(sys.argv[1:] if argv is None else argv)
    runtime = agent_runtime(args) if args[:1] == ["agent-hook"] else None
    if runtime is not None:
        from harness_gate import agent  # noqa: PLC0415

        code = agent.main(runtime)
        return code if argv is not None else _exit_now(code)
    options = check_options(args)
    if options == LEAN_OPTIONS:
        # The pre-commit hook: an ordinary commit is answered from the full check's record.
        from harness_gate import lean  # noqa: PLC0415

        passed = lean.run()
        if passed is not None:
            return passed if argv is not None else _exit_now(passed)
    linted = lint_files(args) if options is None else None
    if options is None and linted is None:
        try:
            from harness_gate.cli import main as cli_main  # noqa: PLC0415  (click: not on the hook path)
        except Exception as exc:  # a dependency that does not load: said in one line, exit 2
            sys.stderr.write(
                f"harness-gate: cannot load its command line ({type(exc).__name__}: {exc}); install harness-gate in "
                "an environment of its own (pipx), where no package of the repository it guards can replace one of "
                "its dependencies\n"
            )
            return 2
        return cli_main(args)
    # A large change makes tens of thousands of objects, none of them cyclic garbage:
    # collecting every 700 allocations only rescans them (docs/performance.md).
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 20, 20)
    try:
        if options is not None:
            check(**options)  # type: ignore[arg-type]
        else:
            assert linted is not None  # noqa: S101  (one of the two lean paths was taken)
            lint(linted[0], artifacts_only=linted[1])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except KeyboardInterrupt:  # as click's CLI answers it
        sys.stderr.write("\nAborted.\n")
        code = 130
    finally:
        gc.set_threshold(*thresholds)
    return code if argv is not None else _exit_now(code)


def _exit_now(code: int) -> NoReturn:
    """The process's own command line: the verdict is out, and every file, thread and
    child is closed. Exit now rather than free every object one by one (~10 ms on a
    change of 10k paths)."""
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
