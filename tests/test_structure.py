"""The layout docs/design.md ("Commands and refusals") describes: one module per command
in harness_gate/commands/, each reached from the command line, and domain modules that
never depend on a command. Read from the package's source with `ast`."""

from __future__ import annotations

import ast
import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Repo

PACKAGE = Path(__file__).resolve().parent.parent / "harness_gate"
COMMANDS = PACKAGE / "commands"
# The entry points that run commands: the console script, the click layer, the one way a
# command is run to its report (runs.py), the GitHub Action.
ENTRY_POINTS = frozenset({"cli.py", "entry.py", "runs.py", "action.py", "__main__.py"})


def _imported(path: Path) -> set[str]:
    """Every module `path` imports (top level or inside a function), as dotted names:
    `from harness_gate.commands import lint` gives `harness_gate.commands.lint`."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _domain_modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if COMMANDS not in p.parents and not (p.parent == PACKAGE and p.name in ENTRY_POINTS)
    )


def test_the_commands_are_modules_of_their_own() -> None:
    names = {p.stem for p in COMMANDS.glob("*.py")} - {"__init__"}
    assert {"init", "plan", "approve", "lint", "status", "check", "explain", "verify", "review", "complete"} <= names
    assert not (PACKAGE / "commands.py").exists()
    for old in ("check", "verification", "review", "format_commands", "demo"):
        assert not (PACKAGE / f"{old}.py").exists(), f"{old}.py is a command: it lives in harness_gate/commands/"


def test_each_command_module_is_reached_from_the_command_line() -> None:
    reached = set().union(*(_imported(PACKAGE / name) for name in ENTRY_POINTS if (PACKAGE / name).exists()))
    for module in sorted(COMMANDS.glob("*.py")):
        if module.name == "__init__.py":
            continue
        assert f"harness_gate.commands.{module.stem}" in reached, f"{module.name}: no entry point imports it"


def test_importing_the_commands_package_imports_no_command() -> None:
    """`check` on the hook path imports harness_gate.commands.check, and the package with it."""
    tree = ast.parse((COMMANDS / "__init__.py").read_text("utf-8"))
    assert [type(node).__name__ for node in tree.body] in ([], ["Expr"]), "a docstring at most"


@pytest.mark.slow
def test_no_domain_module_depends_on_a_command() -> None:
    offenders = {
        p.relative_to(PACKAGE).as_posix(): sorted(m for m in _imported(p) if m.startswith("harness_gate.commands"))
        for p in _domain_modules()
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) > 30, "the domain modules were found"


RULE_CODE = re.compile(r"HG[0-9]{3}")


def test_no_command_module_names_a_rule_code() -> None:
    """A rule code is raised by the domain module that decides the verdict, never by a
    command (docs/design.md, "Commands and refusals"): no string in harness_gate/commands/
    holds one. A usage error's HG904 comes from `errors.usage`, a shallow clone's HG905 from
    `errors.not_enough_history`."""
    modules = sorted(COMMANDS.glob("*.py"))
    assert len(modules) > 10  # the commands were read
    offenders = [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for path in modules
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path)))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_CODE.search(node.value)
    ]
    assert offenders == []


# The refusal contract: an authoring command that refuses writes nothing. A usage error
# exits 2 with HG904; a precondition the repository does not meet exits 1 with its rule's
# finding.
REFUSALS = [
    (("plan", "new", "Bad Id", "--objective", "x", "--verify", "t=true"), 2, "HG904"),
    (("plan", "new", "p1", "--objective", "x", "--verify", "t=true"), 2, "HG904"),
    (("plan", "new", "p2", "--objective", "x", "--verify", "t=true", "--boundary", "/abs"), 2, "HG904"),
    (("plan", "amend", "--plan", "p1", "--objective", "y"), 1, "HG407"),
    (("plan", "amend", "--plan", "bad id"), 2, "HG904"),
    (("plan", "use", "nope"), 2, "HG904"),
    (("approve", "--plan", "p1", "001-amendment.md"), 1, "HG208"),
    (("verify", "--only", "nope"), 2, "HG904"),
    (("record", "--id", "x"), 2, "HG904"),
    (("record", "--id", "tests", "--", "true"), 2, "HG904"),
    (("review", "new"), 1, "HG301"),
    (("complete",), 1, "HG405"),
]


def _state(repo: Repo) -> dict[str, bytes]:
    """Every file of the work tree and the repository's configuration (a branch's pick)."""
    files = {"<.git/config>": (repo.path / ".git" / "config").read_bytes()}
    for dirpath, dirnames, filenames in os.walk(repo.path):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            files[path.relative_to(repo.path).as_posix()] = path.read_bytes()
    return files


@pytest.fixture
def executing(repo: Repo) -> Repo:
    """An approved, committed plan `p1` with an amendment waiting for its approval."""
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    repo.new_plan("p1")
    repo.approve(plan="p1")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan")
    res = repo.cli("plan", "amend", "--plan", "p1", "--add-boundary", "lib/**")
    assert res.exit_code == 0, res.output
    return repo


def test_an_authoring_command_that_refuses_writes_nothing(executing: Repo) -> None:
    for args, code, rule in REFUSALS:
        before = _state(executing)
        at = args.index("--") if "--" in args else len(args)  # `record -- CMD`: options before the command
        res = executing.cli(*args[:at], "--format", "json", *args[at:], input="n\n")
        assert res.exit_code == code, (args, res.output)
        doc = json.loads(res.output[res.output.index("{") :])
        said = doc["error"]["code"] if code == 2 else doc["findings"][0]["code"]
        assert said == rule, (args, doc)
        assert _state(executing) == before, f"{args}: a refusal wrote"


def _graph() -> dict[str, set[str]]:
    """harness-gate's own modules and the ones each imports (at the top or in a function)."""
    names = {
        ".".join(("harness_gate", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
    }
    return {name: {m for m in _imported(path) if m in names and m != name} for name, path in names.items()}


def test_no_import_circle_through_the_click_layer() -> None:
    """cli.py reaches the commands (the demo among them), and nothing it reaches leads back
    to it: the report plumbing lives in runs.py, not in the console script."""
    graph = _graph()
    reached, todo = set(), ["harness_gate.cli"]
    while todo:
        for m in graph.get(todo.pop(), ()):
            if m not in reached:
                reached.add(m)
                todo.append(m)
    assert "harness_gate.commands.demo" in reached  # the test reaches what it should
    assert "harness_gate.cli" not in reached
    assert "harness_gate.entry" not in reached


def test_runs_imports_nothing_of_harness_gate_at_load_time() -> None:
    """The hook's start-up pays for runs.py's few standard modules, nothing more."""
    tree = ast.parse((PACKAGE / "runs.py").read_text("utf-8"))
    top = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)} | {
        a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names
    }
    assert not {m for m in top if m and m.startswith("harness_gate")}


def test_the_action_is_failed_closed_by_the_one_wrapper(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A refusal inside the Action's run is its findings, exit 1, as on the command line
    (its own copy of the wrapper had no `Refused` branch: HG999, exit 2); a bug is HG999."""
    from harness_gate import action
    from harness_gate.errors import Refused

    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.setenv(name, str(tmp_path / name))

    def refused() -> Any:
        raise Refused("HG301", "harness/plans/p1/evidence.jsonl", "evidence is not fresh for this tree")

    monkeypatch.setattr(action, "run", refused)
    assert action.main() == 1
    assert "result=blocked" in (tmp_path / "GITHUB_OUTPUT").read_text()

    def bug() -> Any:
        raise ValueError("boom")

    monkeypatch.setattr(action, "run", bug)
    assert action.main() == 2
    assert "HG999" in (tmp_path / "GITHUB_STEP_SUMMARY").read_text()


def test_one_owner_for_the_signers_file_and_the_failed_run_codes() -> None:
    """`allowed_signers` is named once (artifacts_root.SIGNERS), and a run that did not pass
    is HG305 or HG306 by one mapping (evidence.failure_code)."""
    spelled: dict[str, list[str]] = {"allowed_signers": [], "HG306": []}
    for p in PACKAGE.rglob("*.py"):
        text = p.read_text("utf-8")
        for word, where in spelled.items():
            if f'"{word}"' in text:
                where.append(p.relative_to(PACKAGE).as_posix())
    assert spelled["allowed_signers"] == ["artifacts_root.py"]
    assert sorted(spelled["HG306"]) == ["catalogue/hg3_evidence.py", "evidence.py", "freshness.py"]  # rule, map, set
    assert not [n for n in ast.walk(ast.parse((PACKAGE / "plans.py").read_text())) if getattr(n, "id", "") == "SIGNERS"]


RULES = PACKAGE / "rules"
# The modules that decide from facts they are handed (docs/design.md, "Facts in, findings
# out"): git is asked only by the code that builds those facts (state_facts.py and callers).
DECIDERS = sorted([*RULES.glob("*.py"), PACKAGE / "freshness.py", PACKAGE / "governance.py", PACKAGE / "lifecycle.py"])


def rule_codes_raised() -> dict[str, set[str]]:
    """Each rule code a module of harness_gate/rules/ names as a whole string (what a
    finding is raised with), and the modules that name it."""
    out: dict[str, set[str]] = {}
    for path in sorted(RULES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_CODE.fullmatch(node.value):
                out.setdefault(node.value, set()).add(path.name)
    return out


def test_no_decider_imports_git() -> None:
    """The rules, freshness, governance and lifecycle import nothing of harness_gate.git (nor
    anything relative, which would hide it): the facts they need are handed to them."""
    assert len(DECIDERS) >= 10  # the rules package and the three modules were found
    offenders = {}
    for path in DECIDERS:
        tree = ast.parse(path.read_text("utf-8"), str(path))
        relative = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
        git = sorted(m for m in _imported(path) if m == "harness_gate.git" or m.startswith("harness_gate.git."))
        if git or relative:
            offenders[path.relative_to(PACKAGE).as_posix()] = (git, relative)
    assert offenders == {}
    assert not (PACKAGE / "gate.py").exists(), "the rules live in harness_gate/rules/"


def test_each_rules_module_is_at_most_300_lines() -> None:
    sizes = {p.name: len(p.read_text("utf-8").splitlines()) for p in RULES.glob("*.py")}
    assert len(sizes) >= 8
    assert {name: n for name, n in sizes.items() if n > 300} == {}


def test_each_rule_code_is_raised_in_one_rules_module() -> None:
    raised = rule_codes_raised()
    assert {"HG101", "HG104", "HG210", "HG516"} <= set(raised)  # the scan finds them
    assert {code: sorted(where) for code, where in raised.items() if len(where) > 1} == {}


def test_every_transition_is_built_in_changesets() -> None:
    """One module builds the change sets (changesets.py): `Transition(` is called nowhere
    else in the package, `check` resolves the change set without reaching the rules, the
    trust anchors or the plans' origins itself, and the agent package imports no trust."""
    builders = sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text("utf-8"), str(p)))
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "Transition" or getattr(node.func, "attr", None) == "Transition")
    )
    assert sorted(set(builders)) == ["changesets.py"]
    assert len(builders) >= 4  # the index, a commit, a tool's writes, the work tree at Stop
    check = _imported(COMMANDS / "check.py")
    reached = {m for m in check if m.split(".")[:2] in (["harness_gate", "rules"], ["harness_gate", "trust"])}
    reached |= {m for m in check if m in ("harness_gate.origins", "harness_gate.state_facts")}
    assert reached == set()
    # The agent's hooks judge what changesets builds (a commit range among them), so they
    # open no trust anchors of their own.
    agent = {m for p in (PACKAGE / "agent").rglob("*.py") for m in _imported(p)}
    assert {m for m in agent if m.split(".")[:2] == ["harness_gate", "trust"]} == set()


# The artifacts root's layout as an f-string spells it: a path below `artifacts_dir` ("/plans",
# "/allowed_signers"), or a file of a plan folder ("/plan.md", "/evidence.jsonl").
_LAYOUT = re.compile(r"^/(?:plans\b|allowed_signers\b|plan\.md$|evidence\.jsonl$|approvals\.jsonl$)")


def _joined_layout(node: ast.BinOp) -> bool:
    """Whether `node` joins the layout by `+`: an artifacts root followed by `/`, or
    anything followed by one of its names (`root + "/plans/"`, `prefix + b"plans/"`)."""
    if not (isinstance(node.op, ast.Add) and isinstance(node.right, ast.Constant)):
        return False
    after = node.right.value
    if not isinstance(after, str | bytes):
        return False
    text = after.decode("latin-1") if isinstance(after, bytes) else after
    left = node.left
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr == "encode":
        left = left.func.value  # the root as bytes
    root = ast.unparse(left).endswith("artifacts_dir") and text.startswith("/")
    return root or bool(_LAYOUT.match("/" + text.removeprefix("/")))


def _spelled_layout(path: Path) -> list[int]:
    """The lines of `path` where an f-string or a `+` spells the layout: a value followed
    by one of its names, or an artifacts root followed by `/`."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.BinOp) and _joined_layout(node):
            lines.append(node.lineno)
        if not isinstance(node, ast.JoinedStr):
            continue
        for value, after in itertools.pairwise(node.values):
            if not (isinstance(value, ast.FormattedValue) and isinstance(after, ast.Constant)):
                continue
            text = str(after.value)
            below = text.startswith("/") and not text.startswith("/`")  # "`{root}/`" names the root itself
            root = ast.unparse(value.value).endswith("artifacts_dir") and below
            if root or _LAYOUT.match(text):
                lines.append(node.lineno)
    return lines


def test_the_artifacts_root_layout_is_spelled_in_one_module() -> None:
    """Where plan folders, their logs and the signers file lie below the artifacts root is
    said by artifacts_root.py; every other module asks it."""
    offenders = {
        p.relative_to(PACKAGE).as_posix(): _spelled_layout(p)
        for p in PACKAGE.rglob("*.py")
        if p.name != "artifacts_root.py"
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    assert _spelled_layout(PACKAGE / "artifacts_root.py"), "the check finds a spelled-out path"


_LAYOUT_NAMES = {"plan.md", "approvals.jsonl", "evidence.jsonl", "allowed_signers"}


def test_the_plan_folder_files_are_named_in_one_module() -> None:
    """A plan folder's files and the signers file, as a whole string (a name compared, a
    suffix matched): artifacts_root.py's constants; messages and docstrings may say them."""
    offenders = []
    for p in sorted(PACKAGE.rglob("*.py")):
        if p.name == "artifacts_root.py":
            continue
        for node in ast.walk(ast.parse(p.read_text("utf-8"), str(p))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
                text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
                if text.removeprefix("/") in _LAYOUT_NAMES:
                    offenders.append(f"{p.relative_to(PACKAGE).as_posix()}:{node.lineno}: {text!r}")
    assert offenders == []


MAX_MODULE_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    """Small modules with one job each (CONTRIBUTING.md, "Style"): a module past 600 lines
    holds more than one, and is split by job."""
    sizes = {p.relative_to(PACKAGE).as_posix(): len(p.read_text("utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    assert len(sizes) > 60, "the modules were found"
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_the_agent_hook_types_its_payloads() -> None:
    """The agent hook parses each runtime's payload into typed values (agent/runtimes.py)
    and passes them on as such: no module of harness_gate/agent/ falls back to `Any`."""
    modules = sorted((PACKAGE / "agent").glob("*.py"))
    assert len(modules) >= 8
    offenders = [
        f"{p.name}:{node.lineno}"
        for p in modules
        for node in ast.walk(ast.parse(p.read_text("utf-8"), str(p)))
        if (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.alias) and node.name == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
    ]
    assert offenders == []
