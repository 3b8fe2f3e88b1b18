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
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from harness_gate.report import Report

# The output formats of `check` (`--format`): how a report is written, not a harness format.
OUTPUT_FORMATS = ("text", "json", "github", "sarif", "gitlab")
STAGES = ("pre-commit", "pre-push", "ci")

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


def emit(report: Report, fmt: str) -> None:
    from harness_gate.report import use_color, write_json, write_text  # noqa: PLC0415

    if fmt == "github":
        from harness_gate import github  # noqa: PLC0415

        github.write_outputs(report)
        sys.stdout.write(github.final_line(report))
    elif fmt == "json":
        write_json(report, sys.stdout)
    elif fmt == "markdown":
        from harness_gate import prview  # noqa: PLC0415  (only when asked)

        sys.stdout.write(prview.render(report))
    elif fmt == "sarif":
        from pathlib import Path  # noqa: PLC0415

        from harness_gate import sarif  # noqa: PLC0415  (only when asked: never on the hook path)
        from harness_gate.report import repository_root  # noqa: PLC0415

        sarif.write(report, sys.stdout, root=repository_root(Path.cwd()))
    elif fmt == "gitlab":
        from pathlib import Path  # noqa: PLC0415

        from harness_gate import gitlab  # noqa: PLC0415  (only when asked: never on the hook path)
        from harness_gate.report import repository_root  # noqa: PLC0415

        gitlab.write(report, sys.stdout, root=repository_root(Path.cwd()))
    else:
        stream = sys.stdout
        write_text(report, stream, color=use_color(stream))
    sys.stdout.flush()


def report_of(name: str, body: Callable[[], Report]) -> Report:
    """One command's body run to its report. The refusal contract (docs/design.md,
    "Commands and refusals"): a refusal is its findings, exit 1; any other error exit 2."""
    from harness_gate.errors import HarnessGateError, Refused  # noqa: PLC0415
    from harness_gate.report import Report  # noqa: PLC0415

    try:
        return body()
    except Refused as exc:  # nothing was written
        return Report(name, exc.findings(), lines=(exc.note,) if exc.note else ())
    except HarnessGateError as exc:
        return Report(name, error=exc)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # fail closed: any bug blocks with a reason
        module = _failed_dependency(exc)
        return Report(
            name,
            error=HarnessGateError(
                "HG907",
                f"{module} failed to load ({type(exc).__name__}: {exc})",
                "Install harness-gate in an environment of its own (`pipx install`), where no package of the "
                "repository it guards can stand in for one of its dependencies.",
            )
            if module
            else HarnessGateError(
                "HG999",
                f"internal error: {type(exc).__name__}: {exc}",
                "This is a bug in harness-gate; the command failed closed.",
            ),
        )


def run(name: str, fmt: str, body: Callable[[], Report]) -> NoReturn:
    """Run one command's body, show its report, and exit with its code."""
    report = report_of(name, body)
    try:
        emit(report, fmt)
    except BrokenPipeError:
        # The reader stopped reading (`harness-gate status | head -3`): what it read is what
        # it wanted. Nothing more is written, and the verdict stands.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(report.exit_code)
    except OSError as exc:  # a full disk: the verdict cannot be shown
        with contextlib.suppress(OSError):
            sys.stderr.write(f"harness-gate: cannot write the report: {exc}\n")
        sys.exit(2)
    sys.exit(report.exit_code)


def _failed_dependency(exc: BaseException) -> str | None:
    """The module whose import raised `exc`, when it is not harness-gate's own: a package of
    the guarded repository shadowing a dependency (`click/`, `jsonschema/` on the path) is
    the environment's fault, not a bug to report. (Python strips its import machinery from
    tracebacks: an exception raised by a module's top level ends in a `<module>` frame.)"""
    import traceback  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    own = Path(__file__).resolve().parent

    def foreign(filename: str | None) -> bool:
        return filename is not None and not filename.startswith("<") and own not in Path(filename).resolve().parents

    if isinstance(exc, SyntaxError):
        return exc.filename if foreign(exc.filename) else None
    if isinstance(exc, ImportError) and exc.name:
        return None if exc.name.split(".")[0] == "harness_gate" else exc.name
    frames = traceback.extract_tb(exc.__traceback__)
    if frames and frames[-1].name == "<module>" and foreign(frames[-1].filename):
        return frames[-1].filename
    return None


def check(
    *,
    stage: str | None = None,
    staged: bool = False,
    range_: str | None = None,
    base: str | None = None,
    head: str | None = None,
    plan_id: str | None = None,
    config_file: str | None = None,
    reverify: bool = False,
    landed: bool = False,
    fmt: str = "text",
) -> NoReturn:
    """`harness-gate check`, however its options were parsed."""
    from pathlib import Path  # noqa: PLC0415

    from harness_gate import git  # noqa: PLC0415

    def body() -> Report:
        location = None
        try:
            if staged and not (range_ or base or head):  # exactly the index: no usage error
                # The index's diff is the largest git work of a commit: git starts on it
                # (and what comes first) now, while the rest of harness-gate is imported.
                from harness_gate import artifacts_tree  # noqa: PLC0415

                location = git.locate(Path.cwd())
                artifacts_tree.prefetch(location)
            from harness_gate.commands import check as check_mod  # noqa: PLC0415

            return check_mod.run_check(
                Path.cwd(),
                stage=stage,
                mode=check_mod.infer_mode(stage, staged, range_, base, head),
                plan_id=plan_id,
                config_file=config_file,
                reverify=reverify,
                landed=landed,
                location=location,
            )
        finally:
            git.discard_started()

    run("check", fmt, body)


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
