"""One command run to its end, the same for every entry point (the console script and
its lean `check` path, the click layer, the GitHub Action, the demo): its body run to a
report, failing closed (a refusal is its findings, exit 1; any other error or bug exit
2 with a reason, never a traceback), the report shown in the chosen format, the exit.
Imports nothing of harness-gate at load time: the hook's start-up pays for none of it."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing itself is not imported: a few milliseconds of every hook

if TYPE_CHECKING:
    from typing import NoReturn

    from harness_gate import git
    from harness_gate.report import Report

# The output formats of `check` (`--format`): how a report is written, not a harness format.
OUTPUT_FORMATS = ("text", "json", "github", "sarif", "gitlab")
STAGES = ("pre-commit", "pre-push", "ci")


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


def check(  # noqa: PLR0913  (one argument per command-line option)
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
            elif not staged:
                location = _prefetch_commits(_named_range(stage, range_, base, head))
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
                view=fmt != "text",  # a reviewer's view, which the text report does not show
            )
        finally:
            git.discard_started()

    run("check", fmt, body)


def _named_range(stage: str | None, range_: str | None, base: str | None, head: str | None) -> tuple[str, str] | None:
    """The (base, head) revisions of the commits a check of commits will list, as its
    options or pre-push's environment name them (commands/check.py's `infer_mode` decides
    for real): a guess a prefetch may act on."""
    if range_:
        old, sep, new = range_.partition("..")
        return (old, new) if sep and old and new and not new.startswith(".") else None
    if base:
        return base, head or "HEAD"
    from_ref, to_ref = os.environ.get("PRE_COMMIT_FROM_REF"), os.environ.get("PRE_COMMIT_TO_REF")
    if from_ref and to_ref and stage in (None, "pre-push"):
        return from_ref, to_ref
    return None


def _prefetch_commits(named: tuple[str, str] | None) -> git.Location | None:
    """Start listing a range's commits and their changes (`git.commits`), the largest git
    work of a check of commits, while the rest of harness-gate is imported. Never raises:
    whatever went wrong here, the check meets again and reports in its own order."""
    from pathlib import Path  # noqa: PLC0415

    from harness_gate import git  # noqa: PLC0415

    if named is None or set(named[0]) == {"0"}:
        return None
    try:
        location = git.locate(Path.cwd())
        root = location.toplevel
        old, new = git.resolve(root, named[0]), git.resolve(root, named[1])
        if old is not None and new is not None:
            git.prefetch_commits(root, new, [old])
    except Exception:  # a prefetch decides nothing
        return None
    return location
