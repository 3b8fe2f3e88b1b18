"""The click layer: parse options, call a command of harness_gate/commands/, print its Report.

Every command runs inside `_run` (`runs.run`, shared with the lean `check` and `lint` path),
which turns any error into a report with exit code 2: the gate fails closed and never
shows a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from harness_gate import __version__, hooks, runs
from harness_gate.runs import OUTPUT_FORMATS, STAGES
from harness_gate.runs import run as _run

F = TypeVar("F", bound=Callable[..., Any])


def _complete_plans(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Tab completion of a plan id: the plans the index holds (docs/config.md, "Shell completion")."""
    from harness_gate import completion  # noqa: PLC0415  (only when Tab is pressed)

    return completion.plan_ids(Path.cwd(), incomplete)


def plan_option(help_text: str = "The plan (default: the one this branch has open).") -> Callable[[F], F]:
    """The `--plan` option; Tab completes the plan ids."""
    option: Callable[[F], F] = click.option("--plan", "plan_id", shell_complete=_complete_plans, help=help_text)
    return option


def output_formats(choices: Sequence[str], help_text: str = "Output format.") -> Callable[[F], F]:
    """The `--format` option with these output formats to choose from."""
    option: Callable[[F], F] = click.option(
        "--format", "fmt", type=click.Choice(choices), default="text", show_default=True, help=help_text
    )
    return option


format_option = output_formats(("text", "json"))
# `check` also speaks GitHub Actions (annotations, the step summary, step outputs), and
# SARIF 2.1.0 (code scanning, docs/report.md).
check_format_option = output_formats(OUTPUT_FORMATS)
# A verdict on files (`lint`) is a static-analysis result too: SARIF as well as JSON.
verdict_format_option = output_formats(("text", "json", "sarif"))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="harness-gate")
def cli() -> None:
    """Gate commits and pull requests on approved plans, write boundaries and fresh evidence."""


@cli.command(short_help="Set harness-gate up in this repository.")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(tuple(hooks.AGENT_SETTINGS)),
    help="Also install the agent hook in this runtime's project settings (repeatable; docs/agents.md).",
)
@format_option
def init(agents: Sequence[str], fmt: str) -> None:
    """Scaffold the artifacts root, config, .gitattributes and pre-commit hooks."""
    from harness_gate.commands import init as command  # noqa: PLC0415  (lazy: start-up time)

    _run("init", fmt, lambda: command.init(Path.cwd(), agents=tuple(dict.fromkeys(agents))))


@cli.command("agent-sandbox", short_help="Write the coding agent's OS sandbox rules from the approved boundary.")
@click.option(
    "--runtime",
    "runtimes",
    multiple=True,
    type=click.Choice(hooks.SANDBOXED),
    help="The runtime (repeatable; default: both).",
)
@click.option("--managed", is_flag=True, help="Print Claude Code's managed settings file instead (docs/agents.md).")
@format_option
def agent_sandbox(runtimes: Sequence[str], managed: bool, fmt: str) -> None:
    """Write .claude/settings.local.json's sandbox and .codex/config.toml's permission profile
    from the approved write boundary and the protected paths (this clone's own, never
    committed). Run it again after `approve` or an amendment."""
    from harness_gate.commands import agent_sandbox as command  # noqa: PLC0415

    if managed:
        click.echo(command.managed(), nl=False)
        return
    _run("agent-sandbox", fmt, lambda: command.agent_sandbox(Path.cwd(), tuple(dict.fromkeys(runtimes))))


@cli.command("doctor", short_help="Say whether each coding agent's hook is live in this clone.")
@click.option(
    "--runtime",
    "runtimes",
    multiple=True,
    type=click.Choice(tuple(hooks.AGENT_SETTINGS)),
    help="The runtime to check (repeatable; default: each one `init --agent` set up).",
)
@format_option
def doctor(runtimes: Sequence[str], fmt: str) -> None:
    """Read each runtime's own settings (trust, hook trust and its hash, switches that turn
    hooks off) and say whether it will run harness-gate's agent hook here (docs/agents.md)."""
    from harness_gate.commands import doctor as command  # noqa: PLC0415

    _run("doctor", fmt, lambda: command.doctor_report(Path.cwd(), tuple(dict.fromkeys(runtimes))))


@cli.command("agent-hook", short_help="Judge a coding agent's tool call before it runs (its runtime calls this).")
@click.option("--runtime", type=click.Choice(tuple(hooks.AGENT_SETTINGS)), required=True, help="The agent's runtime.")
def agent_hook(runtime: str) -> None:
    """Read a Claude Code, Codex or Gemini CLI hook payload on stdin and answer it (docs/agents.md)."""
    from harness_gate import agent  # noqa: PLC0415  (lazy: start-up time)

    sys.exit(agent.main(runtime, sys.stdin.buffer))


@cli.group(short_help="Write, amend and pick plans.")
def plan() -> None:
    """Write plans, amend them, and pick the one this branch means."""


@plan.command("new", short_help="Write a new plan.")
@click.argument("plan_id")
@click.option("--objective", required=True, help="What the work achieves.")
@click.option("--acceptance", multiple=True, help="An acceptance criterion (repeatable).")
@click.option("--scope", help="What is in and out of scope.")
@click.option(
    "--boundary",
    multiple=True,
    metavar="PATTERN",
    help="A write-boundary pattern (repeatable; docs/boundary.md). None given: the boundary is None.",
)
@click.option("--verify", multiple=True, metavar="ID=COMMAND", help="A required verification command (repeatable).")
@click.option(
    "--timeout",
    type=click.IntRange(1, 86400),
    default=600,
    show_default=True,
    help="Timeout in seconds for each --verify command.",
)
@click.option(
    "--kind",
    type=click.Choice(["regression_first", "tdd", "characterization", "verification_first"]),
    default="tdd",
    show_default=True,
    help="The verification strategy kind.",
)
@click.option(
    "--mode", type=click.Choice(["native", "guided"]), default="native", show_default=True, help="The execution mode."
)
@click.option("--risk", "risks", multiple=True, help="A known risk (repeatable).")
@format_option
def plan_new(fmt: str, **options: Any) -> None:
    """Write a complete plan for PLAN_ID (it governs this branch once approved and committed)."""
    from harness_gate.commands import plan as command  # noqa: PLC0415

    _run("plan new", fmt, lambda: command.plan_new(Path.cwd(), **options))


@plan.command("amend", short_help="Write an amendment of the plan.")
@plan_option()
@click.option("--objective", help="A new objective.")
@click.option("--add-boundary", multiple=True, metavar="PATTERN", help="Add a write-boundary pattern (repeatable).")
@click.option("--remove-boundary", multiple=True, metavar="PATTERN", help="Remove a pattern (repeatable).")
@click.option("--add-verify", multiple=True, metavar="ID=COMMAND", help="Add a required command (repeatable).")
@click.option("--remove-verify", multiple=True, metavar="ID", help="Remove a required command (repeatable).")
@click.option(
    "--timeout", type=click.IntRange(1, 86400), default=600, show_default=True, help="Seconds, for --add-verify."
)
@click.option("--why", help="Why the objective changes (its delta's summary).")
@format_option
def plan_amend(fmt: str, **options: Any) -> None:
    """Write a Plan Amendment (boundary, commands, objective) for `approve`."""
    from harness_gate.commands import plan as command  # noqa: PLC0415

    _run("plan amend", fmt, lambda: command.plan_amend(Path.cwd(), **options))


@plan.command("use", short_help="Pick the plan this branch means.")
@click.argument("plan_id", shell_complete=_complete_plans)
@format_option
def plan_use(plan_id: str, fmt: str) -> None:
    """Pick PLAN_ID for this branch when it has more than one plan open (kept in .git/config)."""
    from harness_gate.commands import plan as command  # noqa: PLC0415

    _run("plan use", fmt, lambda: command.plan_use(Path.cwd(), plan_id))


@cli.command(short_help="Approve a plan, amendment or resume (answer y).")
@plan_option()
@click.argument("artifact", required=False)
@format_option
def approve(plan_id: str | None, artifact: str | None, fmt: str) -> None:
    """Approve a plan, amendment or repair resume: only the exact answer `y` approves."""
    from harness_gate.commands import approve as command  # noqa: PLC0415

    prompt = sys.stderr if fmt == "json" else sys.stdout
    _run(
        "approve",
        fmt,
        lambda: command.approve(
            Path.cwd(),
            plan_id,
            artifact,
            sys.stdin.buffer,
            prompt,
            tty=command.stdin_is_tty(),
        ),
    )


@cli.command(short_help="Validate plans, records and their lifecycle.")
@click.argument("files", nargs=-1, type=click.Path())
@click.option(
    "--artifacts-only",
    is_flag=True,
    help="Only the FILES under the configured artifacts root; none of them: nothing to lint (the lint hook).",
)
@verdict_format_option
def lint(files: Sequence[str], artifacts_only: bool, fmt: str) -> None:
    """Validate artifacts and their lifecycle (all plans, or the FILES given)."""
    from harness_gate.commands import lint as command  # noqa: PLC0415

    _run("lint", fmt, lambda: command.lint(Path.cwd(), files, artifacts_only=artifacts_only))


@cli.command(short_help="The plan's state, evidence and next step.")
@plan_option()
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--base", help="With markdown: every plan the commits since REF used or brought, and their verdicts.")
@output_formats(
    ("text", "json", "markdown"), "Output format (markdown: the plan for a pull request's reviewer, from the commits)."
)
def status(plan_id: str | None, as_json: bool, base: str | None, fmt: str) -> None:
    """Show the plan's lifecycle state, approval, boundary and next step.

    `--format markdown` shows the plan as the HEAD commit holds it, for a pull request
    comment (`gh pr comment --body-file FILE`)."""
    from harness_gate.commands import status as command  # noqa: PLC0415

    fmt = "json" if as_json else fmt
    if base is not None and fmt != "markdown":
        raise click.UsageError("--base goes with --format markdown")
    if fmt == "markdown":
        _run("status", fmt, lambda: command.status_view(Path.cwd(), plan_id, base))
    _run("status", fmt, lambda: command.status(Path.cwd(), plan_id))


@cli.command(short_help="Judge staged changes, a push or a pull request.")
@click.option("--stage", type=click.Choice(STAGES), help="Which hook or job runs the check.")
@click.option("--staged", is_flag=True, help="Check the index against HEAD (pre-commit).")
@click.option("--range", "range_", metavar="A..B", help="Check every commit in A..B on its own (pre-push).")
@click.option("--base", metavar="REF", help="Check every commit of HEAD (or --head) not in REF (CI).")
@click.option("--head", metavar="REF", help="The head commit with --base (default HEAD).")
@plan_option("Judge against this plan only, instead of the plans that govern each state.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Read the configuration from FILE.")
@click.option("--reverify", is_flag=True, help="Run the required commands here instead of trusting recorded evidence.")
@click.option(
    "--landed",
    is_flag=True,
    help="The range is the base branch's own history (a push there, a merge queue): docs/workflows.md.",
)
@check_format_option
def check(  # noqa: PLR0913  (one argument per command-line option)
    stage: str | None,
    staged: bool,
    range_: str | None,
    base: str | None,
    head: str | None,
    plan_id: str | None,
    config_file: str | None,
    reverify: bool,
    landed: bool,
    fmt: str,
) -> None:
    """Block changes outside the approved write boundary. Exit 0 allowed, 1 blocked, 2 error."""
    runs.check(
        stage=stage, staged=staged, range_=range_, base=base, head=head, plan_id=plan_id,
        config_file=config_file, reverify=reverify, landed=landed, fmt=fmt,
    )  # fmt: skip


@cli.command("pre-receive", short_help="Judge a push on the server (git's pre-receive hook).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Read the configuration from FILE.")
def pre_receive(config_file: str | None) -> None:
    """Judge each pushed ref against the default branch; exit 0 accepts, 1 rejects, 2 error.

    Reads git's `<old> <new> <ref>` lines from standard input (docs/pre-receive.md)."""
    from harness_gate.commands import pre_receive as command  # noqa: PLC0415

    _run("pre-receive", "text", lambda: command.pre_receive(Path.cwd(), sys.stdin.buffer, config_file))


@cli.command(short_help="Say which rule allows or blocks each path.")
@click.argument("paths", nargs=-1, required=True)
@plan_option("Explain against this plan instead of the one this branch has open.")
@format_option
def explain(paths: Sequence[str], plan_id: str | None, fmt: str) -> None:
    """Say whether each PATH may be written, and by which pattern or rule."""
    from harness_gate.commands import explain as command  # noqa: PLC0415

    _run("explain", fmt, lambda: command.run_explain(Path.cwd(), paths, plan_id))


@cli.command(short_help="Run the plan's commands and record evidence.")
@plan_option()
@click.option("--only", multiple=True, metavar="ID", help="Run only this required command (repeatable).")
@format_option
def verify(plan_id: str | None, only: Sequence[str], fmt: str) -> None:
    """Run the plan's required commands and append evidence for the work tree."""
    from harness_gate.commands import verify as command  # noqa: PLC0415
    from harness_gate.progress import Progress  # noqa: PLC0415

    # JSON is for programs, which read the report (often with stderr joined to stdout).
    shown = Progress(sys.stderr, tty=sys.stderr.isatty()) if fmt == "text" else None
    _run("verify", fmt, lambda: command.verify(Path.cwd(), plan_id, only, shown))


@cli.command(context_settings={"ignore_unknown_options": True}, short_help="Run one command and record its evidence.")
@plan_option()
@click.option("--id", "command_id", default="adhoc", show_default=True, help="The record's command id.")
@click.option("--timeout", type=click.IntRange(1, 86400), default=600, show_default=True, help="Seconds.")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
@format_option
def record(plan_id: str | None, command_id: str, timeout: int, argv: Sequence[str], fmt: str) -> None:
    """Run one ad-hoc command (after `--`) and append its evidence (not a required check)."""
    from harness_gate.commands import verify as command  # noqa: PLC0415

    _run("record", fmt, lambda: command.record(Path.cwd(), plan_id, command_id, argv, timeout))


@cli.command(short_help="Print a state's tree fingerprint.")
@click.argument("source", default="worktree", metavar="[worktree|index|REV]")
@format_option
def fingerprint(source: str, fmt: str) -> None:
    """Print the tree fingerprint (the tree id without the artifacts root)."""
    from harness_gate.commands import verify as command  # noqa: PLC0415

    _run("fingerprint", fmt, lambda: command.fingerprint(Path.cwd(), source))


@cli.group("review", short_help="Reviews by someone who did not write the change.")
def review_group() -> None:
    """Reviews by a reviewer who did not write the change and reads it fresh (a clean context)."""


@review_group.command("new", short_help="Write a review for a reviewer to fill in.")
@plan_option()
@click.option("--reviewer", help="Who reviews (default: left for the reviewer to fill in: not the author).")
@format_option
def review_new(plan_id: str | None, reviewer: str | None, fmt: str) -> None:
    """Write a review template bound to the plan, the work tree's fingerprint and its evidence."""
    from harness_gate.commands import review as command  # noqa: PLC0415

    _run("review new", fmt, lambda: command.review_new(Path.cwd(), plan_id, reviewer))


@cli.group("formats", short_help="Task lists, agent runtimes, loops, Harness² trees.")
def formats_group() -> None:
    """Files of the other harness formats harness-gate also checks: task lists and their progress logs,
    agent-runtime evidence and team plans, evaluator loops, Harness² trees (docs/formats.md)."""


@formats_group.command("list", short_help="Every file of an enabled format, and its format.")
@format_option
def formats_list(fmt: str) -> None:
    """Every file of an enabled format in the work tree, and its format."""
    from harness_gate.commands import formats as command  # noqa: PLC0415

    _run("formats list", fmt, lambda: command.list_files(Path.cwd()))


@formats_group.command("status", short_help="Validity and counts of the format files.")
@click.argument("files", nargs=-1, type=click.Path())
@format_option
def formats_status(files: Sequence[str], fmt: str) -> None:
    """Validity and counts (a task list: tasks by status) of FILES, or of every format file."""
    from harness_gate.commands import formats as command  # noqa: PLC0415

    _run("formats status", fmt, lambda: command.status(Path.cwd(), files))


@cli.command(short_help="Write the Pause Report of a paused plan.")
@click.option("--plan", "plan_id", help="The plan (default: the one this branch has open).")
@click.option("--reason", help="Why it paused (default: the rule that paused it).")
@format_option
def pause(plan_id: str | None, reason: str | None, fmt: str) -> None:
    """Write the Pause Report of a plan a review or a circuit breaker paused (docs/lifecycle.md)."""
    from harness_gate.commands import pause as command  # noqa: PLC0415

    _run("pause", fmt, lambda: command.pause(Path.cwd(), plan_id, reason))


@cli.command(short_help="Write a Repair Resume of a paused plan, for approve.")
@click.option("--plan", "plan_id", help="The plan (default: the one this branch has open).")
@click.option("--rounds", type=click.IntRange(1, 3), default=1, show_default=True, help="More repair rounds.")
@format_option
def resume(plan_id: str | None, rounds: int, fmt: str) -> None:
    """Write a Repair Resume bound to the plan's Pause Report; `approve` answers it."""
    from harness_gate.commands import pause as command  # noqa: PLC0415

    _run("resume", fmt, lambda: command.resume(Path.cwd(), plan_id, rounds))


@cli.command(short_help="End the plan: completed, or --cancel.")
@plan_option()
@click.option("--summary", help="The completion summary.")
@click.option("--cancel", is_flag=True, help="End the plan as cancelled (no review needed).")
@format_option
def complete(plan_id: str | None, summary: str | None, cancel: bool, fmt: str) -> None:
    """Write the Completion: needs a fresh passing review and fresh evidence for the work tree."""
    from harness_gate.commands import complete as command  # noqa: PLC0415

    _run("complete", fmt, lambda: command.complete(Path.cwd(), plan_id, summary, cancel=cancel))


@cli.command(short_help="Walk the whole lifecycle in a scratch repository.")
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    help="Make the repository in this new directory, and keep it.",
)
def demo(keep: Path | None) -> None:
    """Walk the lifecycle in a throwaway repository, printing each command."""
    from harness_gate.commands import demo as command  # noqa: PLC0415
    from harness_gate.report import Report  # noqa: PLC0415

    # The demo prints its own steps and exits with its own code; what fails around them
    # (a refusal, an error, a bug) is the one wrapper's report, as for every command.
    codes: list[int] = []

    def body() -> Report:
        codes.append(command.run(sys.stdout, keep))
        return Report("demo")

    report = runs.report_of("demo", body)
    if report.error is not None or report.findings or not codes:
        runs.emit(report, "text")
        sys.exit(report.exit_code or 2)
    sys.exit(codes[0])


def main(argv: Sequence[str] | None = None) -> int:
    stdout = sys.stdout
    try:
        cli.main(args=argv, prog_name="harness-gate", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except SystemExit as exc:
        if sys.stdout is not stdout:
            # click met a closed pipe (`harness-gate --help | head -1`): it wraps the streams
            # to stay quiet and exits 1. The reader stopped reading, nothing failed. (A
            # command's own report keeps its verdict: runs.run.)
            return 0
        return exc.code if isinstance(exc.code, int) else 2
    return 0
