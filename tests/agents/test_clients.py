"""The real Claude Code, Codex CLI and Gemini CLI (pinned, from npm) in a repository set up
with `init --agent claude --agent codex --agent gemini` and `agent-sandbox`, driven by a scripted loopback
model service (model_service.py): what each tool call did is read from the disk.

Run by .ci/agent-clients (`-m clients -n 0`); skipped, saying why, when the clients are
installed in HG_AGENT_CLIENTS and npm cannot install them there, and when HG_AGENT_CLIENTS
is not set (the ordinary suite: the clients take a minute a run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness_gate import config, fingerprints
from tests.agents.model_service import SUB_MODEL, Call, Script, Service

pytestmark = [pytest.mark.clients, pytest.mark.slow]

CLIENTS = {
    "claude": "@anthropic-ai/claude-code@2.1.197", "codex": "@openai/codex@0.171.0",
    "gemini": "@google/gemini-cli@0.61.0",
}  # fmt: skip
CACHE = Path(os.environ.get("HG_AGENT_CLIENTS") or "/nonexistent")
VENV_BIN = Path(sys.executable).parent


def _installed() -> Path:
    bins = CACHE / "node_modules/.bin"
    if all((bins / name).exists() for name in CLIENTS):
        return bins
    if shutil.which("npm") is None:
        pytest.skip("npm is not on PATH: the real clients cannot be installed")
    proc = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), *CLIENTS.values()],
        capture_output=True, timeout=900, check=False,
    )  # fmt: skip
    if proc.returncode != 0 or not all((bins / name).exists() for name in CLIENTS):
        pytest.skip(f"npm cannot install {', '.join(CLIENTS.values())}: {proc.stderr.decode()[-300:]}")
    return bins


@pytest.fixture(scope="module")
def bins() -> Path:
    if not os.environ.get("HG_AGENT_CLIENTS"):
        pytest.skip("the real clients run from .ci/agent-clients (HG_AGENT_CLIENTS names their npm cache)")
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap socat)")
    return _installed()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True).stdout.decode()


def _hg(repo: Path, *args: str, input: bytes | None = None) -> None:
    subprocess.run([str(VENV_BIN / "harness-gate"), *args], cwd=repo, check=True, capture_output=True, input=input)


# A boundary with a root below a folder of the tree (`lib/core`): `lib` is on the way to it.
DEEP = ("src/**", "lib/core/**")


@pytest.fixture
def work(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A repository adopted with both agents, plan p1 (`src/**`, or the boundary the test
    gives as the fixture's parameter) approved and committed on a branch, and the sandbox
    rules written. The user's `~/.claude/settings.json` exists (`{}`)."""
    boundary: tuple[str, ...] = getattr(request, "param", ("src/**",))
    repo = tmp_path / "repo"
    (tmp_path / "home/.claude").mkdir(parents=True)
    (tmp_path / "home/.claude/settings.json").write_text("{}\n")
    (tmp_path / "tmp").mkdir()
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    files = {"src/app.py": "a = 1\n", "other.py": "x = 1\n", "secret/keys.txt": "s\n"}
    if "lib/core/**" in boundary:
        files.update({"lib/core/mod.py": "m = 1\n", "lib/util.py": "u = 1\n"})
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    _hg(repo, "init", "--agent", "claude", "--agent", "codex", "--agent", "gemini")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "adopt")
    _git(repo, "checkout", "-qb", "work")
    bounds = [a for b in boundary for a in ("--boundary", b)]
    _hg(repo, "plan", "new", "p1", "--objective", "Do it", *bounds, "--verify", "tests=true")
    _hg(repo, "approve", input=b"y\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "plan")
    _hg(repo, "agent-sandbox")
    return tmp_path


def run(
    work: Path,
    bins: Path,
    client: str,
    steps: list[Call | str],
    codex_trust: str | None = None,
    sub: Sequence[Call | str] = (),
    codex_config: str = "",
    gemini_settings: dict[str, object] | None = None,
    codex_args: Sequence[str] = (),
    path_first: Path | None = None,
) -> Script:
    """One headless run of `client` over the script; the script, with every request. With
    `codex_trust` (lines of Codex's config.toml), Codex runs trusting only what they say:
    without `--trust` and `--dangerously-bypass-hook-trust`. `codex_args`: more of `codex
    exec`'s options. `path_first`: a folder put before the venv on PATH (the hook's timer)."""
    script = Script(steps, sub=sub)
    service = Service(script)
    home = work / "home"
    first = f"{path_first}:{VENV_BIN}" if path_first is not None else str(VENV_BIN)
    env = {
        "PATH": f"{first}:{bins}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(work / "tmp"),
        "LANG": "C.UTF-8", "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
    }  # fmt: skip
    codex_home = None
    try:
        if client == "claude":
            env.update(
                ANTHROPIC_BASE_URL=service.url, ANTHROPIC_API_KEY="sk-test",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
                IS_SANDBOX="1",
            )  # fmt: skip
            cmd = [
                "claude",
                "-p",
                "go",
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ]
        elif client == "gemini":
            env.update(
                GOOGLE_GEMINI_BASE_URL=service.url, GEMINI_API_KEY="k", GEMINI_CLI_TRUST_WORKSPACE="true",
                GEMINI_TELEMETRY_ENABLED="false",
            )  # fmt: skip
            # Headless, Gemini CLI takes the API key only with the auth type chosen in settings.
            (home / ".gemini").mkdir(exist_ok=True)
            user = {"security": {"auth": {"selectedType": "gemini-api-key"}}, **(gemini_settings or {})}
            (home / ".gemini/settings.json").write_text(json.dumps(user))
            cmd = ["gemini", "--yolo", "-m", "gemini-2.5-flash", "-o", "stream-json", "-p", "go"]
        else:
            # Codex builds its sandbox helper only with CODEX_HOME outside the temporary folder.
            codex_home = CACHE / f"codex-home-{uuid.uuid4().hex}"
            codex_home.mkdir(parents=True)
            (codex_home / "config.toml").write_text(
                f'model = "gpt-5.5"\nmodel_provider = "mock"\n[model_providers.mock]\nname = "mock"\n'
                f'base_url = "{service.url}/v1"\nwire_api = "responses"\nenv_key = "MOCK_KEY"\n'
                + codex_config
                + (codex_trust or "")
            )
            # Codex's shell is a login shell, and /etc/profile resets PATH.
            (home / ".profile").write_text(f'export PATH="{first}:$PATH"\n')
            env.update(CODEX_HOME=str(codex_home), MOCK_KEY="k")
            trust = ["--trust", "--dangerously-bypass-hook-trust"] if codex_trust is None else []
            cmd = ["codex", "exec", *trust, *codex_args, "go"]
        proc = subprocess.run(cmd, cwd=work / "repo", env=env, capture_output=True, timeout=300, check=False)
        (work / f"{client}.out").write_bytes(proc.stdout + b"\n--- stderr\n" + proc.stderr)
        (work / f"{client}.requests.json").write_text(json.dumps(script.requests, indent=1))
    finally:
        service.close()
        if codex_home is not None:
            shutil.rmtree(codex_home, ignore_errors=True)
    return script


STOP_HEADER = "the commit gate (`check`) blocks these changes of the work tree"


def _said(script: Script) -> str:
    return json.dumps([r["body"] for r in script.requests])


SHELL_WRITES = (
    "echo ok > src/shell.py; echo no > other.py; echo no > secret/keys.txt; "
    "python3 -c \"open('.cl'+'aude/settings.local.json','w').write('{\\\"disableAllHooks\\\": true}')\"; "
    'echo out > "$HOME/outside.txt"; echo \'{"disableAllHooks": true}\' > "$HOME/.cl""aude/settings.json"; '
    'echo \'{"disableAllHooks": true}\' > "$HOME/.cl""aude/settings.local.json"; '
    # New files outside the boundary: at the top, and in `lib`, on the way to `lib/core`.
    "echo x > new_top.py; echo x > lib/new.py; true"
)


# Each denied file's folder renamed away and made anew (`.claude`, the plan folder and its
# parents, `.git`), then the files written there: the sandbox must refuse the renames.
RENAMES = (
    'python3 -c "import os\n'
    "c, g, h = '.cl' + 'aude', '.gi' + 't', 'har' + 'ness'\n"
    "for a in (c, h + '/plans/p1', h + '/plans', h, g):\n"
    "    try: os.rename(a, a + '-old')\n"
    "    except OSError as e: print(a, e)\n"
    "for d, f, t in ((c, 'settings.local.json', '{\\\"disableAllHooks\\\": true}'),"
    " (h + '/plans/p1', 'approvals.jsonl', 'forged'), (g, 'commondir', '/tmp')):\n"
    "    try: os.makedirs(d, exist_ok=True); open(d + '/' + f, 'a').write(t)\n"
    '    except OSError as e: print(d, e)\n"; true'
)


def _assert_contained(work: Path, approvals: bytes, head: str, *, new_files: bool) -> None:
    """What the sandbox and the hook let land. `new_files`: whether a new file beside denied
    ones lands (Claude Code: bubblewrap cannot refuse it, docs/agents.md)."""
    repo = work / "repo"
    assert not [p.name for p in repo.iterdir() if p.name.endswith("-old")]  # no folder renamed away
    assert not list((repo / "harness/plans").glob("*-old"))
    assert (repo / "harness/plans/p1/approvals.jsonl").read_bytes() == approvals
    assert not (repo / ".git/commondir").exists()
    assert _git(repo, "rev-parse", "HEAD").strip() == head  # no commit inside the sandbox
    assert (repo / "src/shell.py").read_text() == "ok\n"  # in-boundary shell write lands
    assert (repo / "src/written.py").exists()  # in-boundary Write lands
    assert (repo / "other.py").read_text() == "x = 1\n"
    assert (repo / "secret/keys.txt").read_text() == "s\n"
    assert "disableAllHooks" not in (repo / ".claude/settings.local.json").read_text()
    assert not (repo / "outside.py").exists()  # an outside Write: denied by the hook
    assert not (work / "home/outside.txt").exists()
    assert (work / "home/.claude/settings.json").read_text() == "{}\n"  # the user's settings: an existing file
    assert not (work / "home/.claude/settings.local.json").exists()  # and a new one
    assert (repo / "lib/core/mod.py").read_text() == "m = 1\n"
    assert (repo / "lib/util.py").read_text() == "u = 1\n"
    assert (repo / "new_top.py").exists() is new_files
    assert (repo / "lib/new.py").exists() is new_files


@pytest.mark.parametrize("work", [DEEP], indirect=True, ids=["lib-core"])
def test_claude_code_writes_only_inside_the_boundary(work: Path, bins: Path) -> None:
    """The sandbox refuses every shell write to an existing file outside the boundary, to
    the user's settings and outside the work tree; a new file beside denied ones (at the
    top, in `lib` on the way to `lib/core`) lands, bubblewrap's limit (docs/agents.md), and
    Stop then blocks the end of the session naming each."""
    repo = work / "repo"
    before = (repo / "harness/plans/p1/approvals.jsonl").read_bytes(), _git(repo, "rev-parse", "HEAD").strip()
    script = run(work, bins, "claude", [
        Call("Bash", {"command": SHELL_WRITES}),
        Call("Bash", {"command": RENAMES}),
        Call("Bash", {"command": PLUMBING}),
        Call("Write", {"file_path": str(repo / "src/written.py"), "content": "y = 1\n"}),
        Call("Write", {"file_path": str(repo / "outside.py"), "content": "z\n"}),
        "done",
    ])  # fmt: skip
    _assert_contained(work, *before, new_files=True)
    stops = [r for r in script.requests if STOP_HEADER in json.dumps(r["body"])]
    assert stops  # the end was blocked, and the agent was told why
    said = json.dumps(stops[0]["body"])
    for name in ("new_top.py", "lib/new.py"):
        assert f"`{name}`: added outside the write boundary" in said and "[HG101]" in said


@pytest.mark.parametrize("work", [DEEP], indirect=True, ids=["lib-core"])
def test_codex_writes_only_inside_the_boundary(work: Path, bins: Path) -> None:
    repo = work / "repo"
    before = (repo / "harness/plans/p1/approvals.jsonl").read_bytes(), _git(repo, "rev-parse", "HEAD").strip()
    patch = "*** Begin Patch\n*** Add File: src/written.py\n+y = 1\n*** End Patch\n"
    outside = "*** Begin Patch\n*** Add File: outside.py\n+z\n*** End Patch\n"
    script = run(work, bins, "codex", [
        Call("exec_command", {"cmd": SHELL_WRITES}), Call("exec_command", {"cmd": RENAMES}),
        Call("exec_command", {"cmd": PLUMBING}), Call("apply_patch", patch), Call("apply_patch", outside),
        Call("exec_command", {"cmd": NO_VERIFY}), Call("exec_command", {"cmd": "harness-gate verify"}), "done",
    ])  # fmt: skip
    assert "Command blocked by PreToolUse hook: harness-gate: this command names `--no-verify`" in _said(script)
    _assert_contained(work, *before, new_files=False)  # Codex's profile: the work tree read-only but its grants
    # `verify` runs in the sandbox: `.git` read-only, its objects in a scratch store.
    assert b'"status":"PASS"' in (repo / "harness/plans/p1/evidence.jsonl").read_bytes().replace(b" ", b"")


def test_claude_code_runs_verify_inside_its_sandbox(work: Path, bins: Path) -> None:
    """The sandbox leaves the plan's evidence log writable, `.git` read-only (objects go to
    a scratch store) and the devices it puts in the tree out of the fingerprint: `verify`
    records evidence for the tree as it is outside, and Stop, outside, finds it fresh."""
    repo = work / "repo"
    (repo / "src/app.py").write_text("a = 2\n")
    script = run(work, bins, "claude", [Call("Bash", {"command": "harness-gate verify"}), "done"])
    said = _said(script)
    log = (repo / "harness/plans/p1/evidence.jsonl").read_bytes().decode()
    assert '"status":"PASS"' in log.replace(" ", ""), said[-2000:]
    tree = json.loads(log.splitlines()[-1])["tree"]
    assert tree == fingerprints.fingerprint_worktree(repo, config.Config())  # the tree outside the sandbox
    assert "Stop hook feedback" not in said  # fresh evidence: Stop lets the session end
    assert (repo / "harness/plans/p1/plan.md").read_bytes().startswith(b"# Plan")  # untouched


PLUMBING = (
    "python3 -c \"import subprocess as s; g='gi'+'t'; r=lambda *a: s.run([g,*a],check=True,capture_output=True)"
    ".stdout.decode().strip(); "
    "o=__import__('os'); e=dict(o.environ, GIT_INDEX_FILE=o.environ['TMPDIR'] + '/ix'); "
    "s.run([g,'read-tree','HEAD'],env=e,check=True); "
    "b=s.run([g,'hash-'+'object','-w','--stdin'],input=b'evil = 1\\\\n',capture_output=True,check=True)"
    ".stdout.decode().strip(); "
    "s.run([g,'update-'+'index','--add','--cacheinfo','100644,'+b+',evil.py'],env=e,check=True); "
    "t=s.run([g,'write-'+'tree'],env=e,capture_output=True,check=True).stdout.decode().strip(); "
    "c=r('commit-'+'tree',t,'-p','HEAD','-m','x'); r('update-'+'ref','HEAD',c)\""
)


def test_claude_code_stop_blocks_a_plumbing_commit_and_a_later_violation(work: Path, bins: Path) -> None:
    """The commit made past the commit gate leaves the tree clean; Stop judges the
    session's commits and blocks. A second violation after that block is reported too.
    Without the sandbox (agent-sandbox not run, or its rules switched off): under it `.git`
    is read-only and no such commit is made (the tests above)."""
    repo = work / "repo"
    settings = repo / ".claude/settings.local.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "sandbox": {"enabled": False}}))
    head = _git(repo, "rev-parse", "HEAD").strip()
    script = run(work, bins, "claude", [
        Call("Bash", {"command": PLUMBING}), "first done",
        Call("Bash", {"command": "echo new > new_top.py"}), "second done", "third done",
    ])  # fmt: skip
    assert _git(repo, "rev-parse", "HEAD").strip() != head  # the commit landed, the tree is clean
    said = _said(script)
    assert "commits made since this session began" in said and "evil.py" in said
    assert (repo / "new_top.py").exists()  # no sandbox here: the shell wrote it
    assert "new_top.py" in said  # reported by the second block


NO_VERIFY = "echo 'b = 2' >> src/app.py && git add src/app.py && git commit --no-verify -qm bypass"


def test_codex_denies_no_verify_and_stop_blocks_plumbing_and_a_later_violation(work: Path, bins: Path) -> None:
    """Without the sandbox (`--dangerously-bypass-approvals-and-sandbox`), so that only the
    hook stands in the way: `git commit --no-verify` is denied (Codex cannot ask a human),
    and nothing of the command runs; a plumbing commit lands past the commit gate, and Stop
    judges the session's commits and blocks; a second violation after that block is
    reported too. Under the profile `.git` is read-only and neither commit is made (the
    tests above)."""
    repo = work / "repo"
    head = _git(repo, "rev-parse", "HEAD").strip()
    script = run(work, bins, "codex", [
        Call("exec_command", {"cmd": NO_VERIFY}), Call("exec_command", {"cmd": PLUMBING}), "first done",
        Call("exec_command", {"cmd": "echo new > new_top.py"}), "second done", "third done",
    ], codex_args=["--dangerously-bypass-approvals-and-sandbox"])  # fmt: skip
    said = _said(script)
    assert "a way round the commit gate" in said and "`--no-verify`" in said  # the hook's answer, said to the agent
    assert (repo / "src/app.py").read_text() == "a = 1\n"  # nothing of the denied command ran
    log = _git(repo, "log", "--format=%s", f"{head}..HEAD").split()
    assert log == ["x"]  # the plumbing commit, and no `bypass` commit
    assert _git(repo, "ls-tree", "--name-only", "HEAD", "evil.py") == "evil.py\n"  # committed, never in the tree
    assert not (repo / "evil.py").exists()
    assert "commits made since this session began" in said and "`evil.py`: commit " in said  # the first block
    assert (repo / "new_top.py").exists()
    assert "`new_top.py`: added outside the write boundary" in said  # reported by the second block


def _doctor(repo: Path, codex_home: Path) -> tuple[int, dict[str, object]]:
    proc = subprocess.run(
        [str(VENV_BIN / "harness-gate"), "doctor", "--runtime", "codex", "--format", "json"], cwd=repo,
        env={**os.environ, "CODEX_HOME": str(codex_home), "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"},
        capture_output=True, check=False,
    )  # fmt: skip
    return proc.returncode, json.loads(proc.stdout)


def test_codex_runs_the_hook_without_bypass_once_doctor_says_it_is_live(work: Path, bins: Path) -> None:
    """Codex's trust as doctor reads it: with the project trusted and the `[hooks.state]`
    lines doctor prints, Codex runs the hook with no trust flag at all; with only the
    project trusted, doctor says the hook is not live, and Codex skips it in silence."""
    repo = work / "repo"
    project = f'[projects.{json.dumps(str(repo))}]\ntrust_level = "trusted"\n'
    scratch = work / "codex-config"
    scratch.mkdir()
    (scratch / "config.toml").write_text(project)
    code, doc = _doctor(repo, scratch)
    assert code == 1  # project trusted, hooks not: not live
    hooks = doc["data"]["runtimes"]["codex"]["hooks"]  # type: ignore[index]
    assert {h["status"] for h in hooks} == {"untrusted"}
    # The sandbox lets the plan folder be written (verify appends evidence there); only the
    # hook refuses every write under the artifacts root: what lands says whether it ran.
    note = repo / "harness/plans/p1/note.md"
    outside = "*** Begin Patch\n*** Add File: harness/plans/p1/note.md\n+z\n*** End Patch\n"
    run(work, bins, "codex", [Call("apply_patch", outside), "done"], codex_trust=project)
    assert note.exists()  # the silent gap: no hook ran
    note.unlink()
    trusted = project + "".join(f'[hooks.state.{json.dumps(h["key"])}]\ntrusted_hash = "{h["hash"]}"\n' for h in hooks)
    (scratch / "config.toml").write_text(trusted)
    assert _doctor(repo, scratch)[0] == 0
    run(work, bins, "codex", [Call("apply_patch", outside), "done"], codex_trust=trusted)
    assert not note.exists()  # the hook ran, trusted, and denied


def test_claude_code_enter_worktree_writes_are_judged_in_the_worktree(work: Path, bins: Path) -> None:
    """EnterWorktree makes `.claude/worktrees/w1` and moves the session there, while
    CLAUDE_PROJECT_DIR stays on the main tree: writes there are judged in the worktree (its
    branch starts at this HEAD, `worktree.baseRef: head`, so plan p1 governs it), and Stop
    judges the worktree the session is in."""
    repo = work / "repo"
    (work / "home/.claude").mkdir(parents=True, exist_ok=True)
    (work / "home/.claude/settings.json").write_text(json.dumps({"worktree": {"baseRef": "head"}}))
    tree = repo / ".claude/worktrees/w1"
    script = run(work, bins, "claude", [
        Call("EnterWorktree", {"name": "w1"}),
        Call("Write", {"file_path": str(tree / "src/wt.py"), "content": "w = 1\n"}),
        Call("Write", {"file_path": str(tree / "outside.py"), "content": "z\n"}),
        Call("Bash", {"command": "echo no > other.py"}),
        "first done", "second done",
    ])  # fmt: skip
    said = _said(script)
    assert (tree / "src/wt.py").read_text() == "w = 1\n"  # inside the boundary, in the worktree: allowed
    assert not (tree / "outside.py").exists()
    assert "nested in this one" not in said  # not taken for another repository
    assert (tree / "other.py").read_text() == "no\n"  # a shell write: Stop reports it, in the worktree
    assert "`other.py`: changed outside the write boundary" in said
    assert "`.claude/worktrees/w1/`:" not in said  # the folder is no change of the main tree


def test_gemini_cli_writes_only_inside_the_boundary_and_after_agent_reports(work: Path, bins: Path) -> None:
    """Gemini CLI has no sandbox rules of ours: its tool writes are judged by the hook, and a
    shell write lands and is reported at AfterAgent, which keeps the agent working."""
    repo = work / "repo"
    script = run(work, bins, "gemini", [
        Call("write_file", {"file_path": str(repo / "src/written.py"), "content": "y = 1\n"}),
        Call("write_file", {"file_path": str(repo / "outside.py"), "content": "z\n"}),
        Call("replace", {"file_path": str(repo / "other.py"), "old_string": "x = 1", "new_string": "x = 9",
                         "instruction": "change x"}),
        Call("run_shell_command", {"command": "echo no > secret/keys.txt"}),
        "first done", "second done",
    ])  # fmt: skip
    said = _said(script)
    assert (repo / "src/written.py").read_text() == "y = 1\n"
    assert not (repo / "outside.py").exists()
    assert (repo / "other.py").read_text() == "x = 1\n"
    assert "outside the write boundary" in said
    assert (repo / "secret/keys.txt").read_text() == "no\n"  # no sandbox: the shell write lands
    assert "`secret/keys.txt`: changed outside the write boundary" in said  # and AfterAgent says so


def test_codex_subagent_stop_blocks_the_sub_agent(work: Path, bins: Path) -> None:
    """Codex 0.171 sends SubagentStop to the entry `init --agent codex` writes, and a block
    there keeps the sub-agent working: it is told what the gate would refuse (a file its
    shell wrote where the sandbox lets `verify` write, the plan folder, which no rule knows)."""
    repo = work / "repo"
    spawn = {"task_name": "sub_task", "message": "do the sub task", "model": SUB_MODEL, "fork_turns": "none"}
    wait = Call("wait_agent", {"timeout_ms": 20000}, namespace="collaboration")
    script = run(
        work, bins, "codex", [Call("spawn_agent", spawn, namespace="collaboration"), wait, "done", "done again"],
        sub=[Call("exec_command", {"cmd": "echo x > harness/plans/p1/note.md"}), "sub done", "sub done again"],
        codex_config="[features]\nmulti_agent_v2 = true\n",
    )  # fmt: skip
    assert (repo / "harness/plans/p1/note.md").exists()  # the sandbox let it through
    sub = json.dumps([r["body"] for r in script.requests if r["body"].get("model") == SUB_MODEL])
    # The SubagentStop block, said to the sub-agent.
    assert "the commit gate (`check`) blocks these changes of the work tree" in sub and "note.md`" in sub


@pytest.mark.parametrize(
    "switch", [{"enabled": False}, {"disabled": ["harness-gate agent-hook --runtime gemini"]}], ids=["off", "named"]
)
def test_gemini_cli_hooks_config_switches_the_hook_off_and_doctor_says_so(
    work: Path, bins: Path, switch: dict[str, object]
) -> None:
    repo = work / "repo"
    (work / "home/.gemini").mkdir(parents=True, exist_ok=True)
    (work / "home/.gemini/settings.json").write_text(json.dumps({"hooksConfig": switch}))
    proc = subprocess.run(
        [str(VENV_BIN / "harness-gate"), "doctor", "--runtime", "gemini", "--format", "json"], cwd=repo,
        env={**os.environ, "HOME": str(work / "home")}, capture_output=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1 and "HG911" in proc.stdout.decode()
    outside = Call("write_file", {"file_path": str(repo / "outside.py"), "content": "z\n"})
    run(work, bins, "gemini", [outside, "done"], gemini_settings={"hooksConfig": switch})
    assert (repo / "outside.py").exists()  # no hook ran: what doctor said


def test_claude_code_disable_all_hooks_switches_the_hook_off_and_doctor_says_so(work: Path, bins: Path) -> None:
    repo = work / "repo"
    (work / "home/.claude").mkdir(parents=True, exist_ok=True)
    (work / "home/.claude/settings.json").write_text(json.dumps({"disableAllHooks": True}))
    proc = subprocess.run(
        [str(VENV_BIN / "harness-gate"), "doctor", "--runtime", "claude", "--format", "json"], cwd=repo,
        env={**os.environ, "HOME": str(work / "home")}, capture_output=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1 and "disableAllHooks" in proc.stdout.decode()
    run(work, bins, "claude", [Call("Write", {"file_path": str(repo / "outside.py"), "content": "z\n"}), "done"])
    assert (repo / "outside.py").exists()  # no hook ran: what doctor said


# The hook's own wall time, call by call: a `harness-gate` first on PATH that times the real
# one's `agent-hook` process (from its start to its exit, the payload already read) and
# appends `event start end` (seconds) to a log; any other command goes straight through.
TIMER = """#!/bin/bash
if [ "$1" != agent-hook ]; then exec "{real}" "$@"; fi
payload=$(cat; printf x); payload=${{payload%x}}
event=unknown
if [[ $payload =~ \\"hook_event_name\\":\\ *\\"([A-Za-z]+)\\" ]]; then event=${{BASH_REMATCH[1]}}; fi
start=$EPOCHREALTIME
printf '%s' "$payload" | "{real}" "$@"
rc=$?
end=$EPOCHREALTIME
printf '%s %s %s\\n' "$event" "$start" "$end" >> "{log}"
exit $rc
"""
TIMED = 6  # tool calls timed per client: the median of at least 5
CHECK = ["harness-gate", "check", "--stage", "pre-commit", "--staged"]  # the entry pre-commit runs


def _median(xs: Sequence[float]) -> float:
    ordered = sorted(xs)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_hook_time_per_call_beside_the_pre_commit_hook(work: Path, bins: Path, client: str) -> None:
    """The hook's wall time per PreToolUse (Gemini CLI: BeforeTool) call in the real client,
    beside `pre-commit run harness-gate` over the same writes staged, in the same
    repository: the agent hook costs no more than the commit hook (docs/performance.md,
    case 8). The medians go to `timings.json` (and to HG_AGENT_TIMINGS, when it names a
    file), for docs/agents.md's table."""
    repo = work / "repo"
    timer = work / "timer"
    timer.mkdir()
    log = work / "hook-times.log"
    (timer / "harness-gate").write_text(TIMER.format(real=VENV_BIN / "harness-gate", log=log))
    (timer / "harness-gate").chmod(0o755)
    names = [f"src/t{i}.py" for i in range(TIMED)]
    if client == "claude":
        steps: list[Call | str] = [Call("Write", {"file_path": str(repo / n), "content": "t = 1\n"}) for n in names]
    elif client == "codex":
        steps = [Call("apply_patch", f"*** Begin Patch\n*** Add File: {n}\n+t = 1\n*** End Patch\n") for n in names]
    else:
        steps = [Call("write_file", {"file_path": str(repo / n), "content": "t = 1\n"}) for n in names]
    run(work, bins, client, [*steps, "done"], path_first=timer)
    assert all((repo / n).read_text() == "t = 1\n" for n in names)  # every call let through
    rows = [line.split() for line in log.read_text().splitlines()]
    pre = "BeforeTool" if client == "gemini" else "PreToolUse"
    hook = [float(end) - float(start) for event, start, end in rows if event == pre]
    assert len(hook) >= TIMED  # the hook ran, timed, for each call
    _git(repo, "add", *names)
    env = {**os.environ, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}", "PRE_COMMIT_HOME": str(work / "pc")}
    commit: list[float] = []
    check: list[float] = []  # the hook pre-commit runs, alone
    for _ in range(TIMED):  # interleaved, so that the machine's load hits both alike
        for cmd, times in ((["pre-commit", "run", "harness-gate"], commit), (CHECK, check)):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, check=False)
            times.append(time.perf_counter() - t0)
            assert proc.returncode == 0, proc.stdout.decode()[-800:]
    numbers: dict[str, object] = {"client": client, "hook_calls": len(hook)}
    for key, times in (("hook", hook), ("pre_commit", commit), ("check", check)):
        numbers[f"{key}_median_ms"] = round(_median(times) * 1000, 1)
        numbers[f"{key}_ms"] = [round(x * 1000, 1) for x in times]
    (work / "timings.json").write_text(json.dumps(numbers))
    if os.environ.get("HG_AGENT_TIMINGS"):
        with Path(os.environ["HG_AGENT_TIMINGS"]).open("a") as fh:
            fh.write(json.dumps(numbers) + "\n")
    assert _median(hook) <= _median(commit), numbers
