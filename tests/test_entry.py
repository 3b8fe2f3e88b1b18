"""The console script's lean `check` and `lint FILE...` paths (harness_gate.entry) against
the click CLI: the same answers, without importing click."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate import cli, entry
from tests.adversarial.util import setup_gated
from tests.helpers import Repo

LEAN = [
    ["check", "--staged"],
    ["check", "--stage", "pre-commit", "--staged"],
    ["check", "--stage=pre-commit", "--staged", "--format=json"],
    ["check", "--staged", "--format", "json", "--plan", "p1"],
    ["check", "--staged", "--plan", "nope"],
    ["check", "--staged", "--plan", "Not a plan id"],
    ["check", "--range", "HEAD~1..HEAD", "--format", "json"],
    ["check", "--base", "HEAD~1", "--head", "HEAD"],
    ["check", "--staged", "--range", "HEAD~1..HEAD"],
    ["check", "--head", "HEAD"],
    ["check", "--range", "nonsense"],
    ["check", "--staged", "--config", "missing.toml"],
    ["check"],
]
# What click must read: help, other commands, bad or repeated options, stray arguments.
CLICK = [
    [],
    ["--version"],
    ["status"],
    ["check", "--help"],
    ["check", "-h"],
    ["check", "--stage", "bogus"],
    ["check", "--format", "xml", "--staged"],
    ["check", "--staged", "--staged"],
    ["check", "--plan", "a", "--plan", "b"],
    ["check", "--plan"],
    ["check", "--plan", "--staged"],
    ["check", "--plan="],
    ["check", "--staged", "extra"],
    ["check", "--stagedx"],
    ["check", "--sta", "pre-commit"],
    ["check", "--", "--staged"],
    ["check", "--staged", "--config", "/"],
]


# The lint hook's argument lists (pre-commit passes the staged names) and what click reads.
LINT_LEAN = [["lint"], ["lint", "harness/plans/p1/plan.md"], ["lint", "harness", "src/app.py", "missing.md"]]
LINT_CLICK = [
    ["lint", "--format", "json"],
    ["lint", "--format=json", "harness"],
    ["lint", "--help"],
    ["lint", "-h"],
    ["lint", "--", "harness"],
    ["lint", ""],
    ["lint", "harness", "--bogus"],
]


def test_which_argument_lists_take_the_lean_path() -> None:
    for argv in LEAN:
        assert entry.check_options(argv) is not None, argv
    for argv in CLICK:
        assert entry.check_options(argv) is None, argv
    for argv in LINT_LEAN:
        assert entry.check_options(argv) is None and entry.lint_files(argv) == (argv[1:], False), argv
        hook = ["lint", "--artifacts-only", *argv[1:]]
        assert entry.lint_files(hook) == (argv[1:], True), hook
    for argv in LINT_CLICK + CLICK:
        assert entry.lint_files(argv) is None, argv


def test_the_lean_lint_answers_as_click_does(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    setup_gated(repo)
    repo.write("harness/plans/p1/notes.txt", "stray\n")  # HG516
    verdicts = set()
    for argv in [*LINT_LEAN, ["lint", "harness/plans/p1/notes.txt"], ["lint", "harness/plans/p1/plan.md"]]:
        lean = entry.main(argv)
        lean_out = capsys.readouterr()
        full = cli.main(argv)
        full_out = capsys.readouterr()
        assert (lean, lean_out.out, lean_out.err) == (full, full_out.out, full_out.err), argv
        verdicts.add(lean)
    assert verdicts == {0, 1}


@pytest.mark.slow
def test_the_lean_path_answers_as_click_does(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    setup_gated(repo)
    repo.write("other.py", "x = 2\n")  # outside the boundary: HG101
    repo.git("add", "-A")
    verdicts = set()
    for argv in LEAN + [a for a in CLICK if a and a[0] == "check"]:
        lean = entry.main(argv)
        lean_out = capsys.readouterr()
        full = cli.main(argv)
        full_out = capsys.readouterr()
        assert (lean, lean_out.out, lean_out.err) == (full, full_out.out, full_out.err), argv
        verdicts.add(lean)
    assert verdicts == {0, 1, 2}  # passes, blocks and errors were all compared


@pytest.mark.slow
def test_the_hook_command_does_not_import_click(repo: Repo) -> None:
    setup_gated(repo)
    probe = (
        "import sys; from harness_gate.entry import main; code = main(sys.argv[1:]); "
        "sys.stdout.flush(); print('click' in sys.modules, file=sys.stderr); sys.exit(code)"
    )
    hooks = (["check", "--stage", "pre-commit", "--staged"], "False"), (["lint", "harness/plans/p1/plan.md"], "False")
    for argv, imported in (*hooks, (["lint", "--format", "json"], "True"), (["status"], "True")):
        res = subprocess.run([sys.executable, "-c", probe, *argv], cwd=repo.path, capture_output=True, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        assert res.stderr.decode().strip() == imported, argv


def test_a_config_click_cannot_read_goes_to_click(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('artifacts_dir = "harness"\n')
    assert entry.check_options(["check", "--staged", "--config", str(cfg)]) is not None
    monkeypatch.setattr(os, "access", lambda *_: False)  # as for a non-root user and mode 000
    assert entry.check_options(["check", "--staged", "--config", str(cfg)]) is None


def test_usage_errors_come_before_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # not a repository
    assert entry.main(["check", "--staged", "--head", "HEAD", "--format", "json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "HG904"


def test_gc_thresholds_are_restored(repo: Repo) -> None:
    setup_gated(repo)
    before = gc.get_threshold()
    try:
        gc.set_threshold(500, 7, 9)
        entry.main(["check", "--staged", "--format", "json"])
        assert gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(*before)


@pytest.mark.slow
def test_the_lint_hook_reads_the_parses_the_check_hook_cached(repo: Repo) -> None:
    """At a commit, lint runs after check on the same bytes: the parsers are not loaded again."""
    setup_gated(repo)
    repo.write("src/app.py", "x = 2\n")
    repo.git("add", "-A")
    probe = (
        "import sys; from harness_gate.entry import main; code = main(sys.argv[1:]); sys.stdout.flush(); "
        "print('jsonschema' in sys.modules or 'markdown_it' in sys.modules, file=sys.stderr); sys.exit(code)"
    )
    lint = [sys.executable, "-c", probe, "lint", "harness/plans/p1/plan.md", "harness/plans/p1/approvals.jsonl"]
    cache = Path(repo.git("rev-parse", "--git-path", "harness-gate").decode().strip())
    for hook_ran_first, parsers in ((False, "True"), (True, "False")):
        if hook_ran_first:
            assert repo.run("check", "--stage", "pre-commit", "--staged").returncode == 0
        else:
            assert not (repo.path / cache).exists()
        res = subprocess.run(lint, cwd=repo.path, capture_output=True, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        assert res.stderr.decode().strip() == parsers


@pytest.mark.parametrize("platform", ["win32", "cygwin", "emscripten"])
def test_an_unsupported_platform_is_said_in_one_line(
    platform: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Never HG999 from a missing POSIX module: one line, exit 2, for every command."""
    monkeypatch.setattr(sys, "platform", platform)
    for args in (["check", "--staged"], ["status"], ["--version"]):
        assert entry.main(args) == 2
        err = capsys.readouterr().err
        assert err == f"harness-gate: {platform} is not supported (Linux and macOS are; on Windows, use WSL)\n"


# What the full staged check (the hook, when the lean path hands over) may import once the
# parsed artifacts are cached: a new import on the hook's path is a decision, made here.
HOOK_PATH_MODULES = frozenset(
    {
        "harness_gate",
        "harness_gate.approvals",
        "harness_gate.artifacts",
        "harness_gate.artifacts.artifact",
        "harness_gate.artifacts.kinds",
        "harness_gate.artifacts_root",
        "harness_gate.artifacts_tree",
        "harness_gate.boundary",
        "harness_gate.cache",
        "harness_gate.catalogue",
        "harness_gate.catalogue.hg1_boundary",
        "harness_gate.catalogue.hg2_plans",
        "harness_gate.catalogue.hg3_evidence",
        "harness_gate.catalogue.hg4_review",
        "harness_gate.catalogue.hg5_syntax",
        "harness_gate.catalogue.hg6_formats",
        "harness_gate.catalogue.hg9_environment",
        "harness_gate.catalogue.rule",
        "harness_gate.change",
        "harness_gate.changesets",
        "harness_gate.commands",
        "harness_gate.commands.check",
        "harness_gate.config",
        "harness_gate.entry",
        "harness_gate.errors",
        "harness_gate.findings",
        "harness_gate.fingerprints",
        "harness_gate.formats",
        "harness_gate.fsutil",
        "harness_gate.git",
        "harness_gate.git.diff",
        "harness_gate.git.index",
        "harness_gate.git.objects",
        "harness_gate.git.process",
        "harness_gate.git.provenance",
        "harness_gate.git.repo",
        "harness_gate.git.trees",
        "harness_gate.globs",
        "harness_gate.governance",
        "harness_gate.head_requirements",
        "harness_gate.history",
        "harness_gate.jsonstrict",
        "harness_gate.lean",
        "harness_gate.lean_record",
        "harness_gate.lifecycle",
        "harness_gate.links",
        "harness_gate.origins",
        "harness_gate.plans",
        "harness_gate.plumbing",
        "harness_gate.ranges",
        "harness_gate.report",
        "harness_gate.rule_links",
        "harness_gate.rules",
        "harness_gate.rules.artifacts",
        "harness_gate.rules.authority",
        "harness_gate.rules.explanation",
        "harness_gate.rules.formats",
        "harness_gate.rules.protected_paths",
        "harness_gate.rules.symlinks",
        "harness_gate.rules.transition",
        "harness_gate.runs",
        "harness_gate.schema",
        "harness_gate.state_facts",
        "harness_gate.trust",
    }
)
# What the first check after an artifact changed may add: the parsers and their libraries.
PARSER_LIBRARIES = frozenset(
    {"attr", "attrs", "jsonschema", "jsonschema_specifications", "markdown_it", "mdurl", "referencing", "rpds"}
    | {"typing_extensions"}
)


@pytest.mark.slow
def test_the_full_hook_path_imports_only_what_it_is_allowed(repo: Repo) -> None:
    setup_gated(repo)
    repo.write("src/app.py", "x = 2\n")
    repo.git("add", "-A")
    probe = (
        "import sys; from harness_gate.entry import main; code = main(sys.argv[1:]); sys.stdout.flush(); "
        "print(' '.join(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
    )
    # --format json: the lean path answers only the hook's own command, so the full check runs.
    argv = [sys.executable, "-c", probe, "check", "--stage", "pre-commit", "--staged", "--format", "json"]
    imported = []
    for _ in range(2):  # the first run parses and caches the artifacts, the second reads the cache
        res = subprocess.run(argv, cwd=repo.path, capture_output=True, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        imported.append(set(res.stderr.decode().split()))
    cold, warm = imported
    ours = {m for m in warm if m == "harness_gate" or m.startswith("harness_gate.")}
    assert ours <= HOOK_PATH_MODULES, sorted(ours - HOOK_PATH_MODULES)
    assert "harness_gate.commands.check" in ours  # the probe saw the full check, not the lean path
    third = {m.split(".")[0] for m in warm} - set(sys.stdlib_module_names) - {"harness_gate"}
    tomli = {"tomli"} if sys.version_info < (3, 11) else set()  # tomllib's backport reads the config
    assert {m for m in third if not m.startswith("_")} <= tomli, sorted(third)
    extra = {m.split(".")[0] for m in cold - warm} - set(sys.stdlib_module_names) - {"harness_gate"}
    assert {m for m in extra if not m.startswith("_")} <= PARSER_LIBRARIES, sorted(extra)
    assert "click" not in cold
