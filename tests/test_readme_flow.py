"""README's own-repository flow, typed as written: every line of its code block run by bash in
a project with a bare origin, the hooks `init` writes installed (the console scripts on PATH,
as after `pipx install`), then CI as a fresh clone. A README that stops working fails here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# installs the hooks and runs pytest as a verify command
pytestmark = [pytest.mark.slow, pytest.mark.integration]

README = Path(__file__).resolve().parent.parent / "README.md"
PLACEHOLDERS = {
    "FILL_IN: the reviewer's name (not the author's)": "Rae Viewer",
    "FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED": "PASS",
    "FILL_IN: what the reviewer read (the diff, the plan, the evidence).": "The diff, the plan and the evidence.",
}


def own_repository_block() -> list[str]:
    """The block after "In your own repository", one command per entry (continuations
    joined, comments and the install line left out: the test's environment is installed)."""
    text = README.read_text()
    start = text.index("In your own repository")
    block = re.search(r"```bash\n(.*?)```", text[start:], re.DOTALL)
    assert block is not None
    joined = block.group(1).replace("\\\n", " ")
    return [line for line in (ln.strip() for ln in joined.splitlines()) if line]


def test_the_readme_flow_as_typed_ends_with_a_passing_ci(tmp_path: Path) -> None:
    lines = own_repository_block()
    assert lines[0].startswith("pipx install")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # harness-gate, pre-commit, pytest
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine: pytest writes __pycache__
    origin, project = tmp_path / "origin.git", tmp_path / "project"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(project)], check=True, capture_output=True)

    def sh(command: str, stdin: str | None = None) -> str:
        proc = subprocess.run(
            ["bash", "-c", command], cwd=project, env=env, input=stdin, capture_output=True, text=True, check=False
        )
        said = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"$ {command}\n{said}"
        return said

    # A project as it stands before adopting harness-gate.
    (project / "src/auth").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / ".gitignore").write_text("__pycache__/\n")
    (project / "src/auth/login.py").write_text("def login(user):\n    return user == 'admin'\n")
    (project / "tests/test_auth.py").write_text(
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent.parent / 'src'))\n"
        "from auth.login import login\n\n\ndef test_login():\n    assert login('admin')\n"
    )
    sh("git add -A && git commit -qm 'A project' && git push -q origin HEAD")

    said: dict[str, str] = {}
    for line in lines[1:]:
        command = line.split("  #", 1)[0].strip()
        if command.startswith("#"):
            if "work inside the boundary" in command:
                (project / "src/auth/login.py").write_text("def login(user):\n    return user in ('admin', 'root')\n")
                said["work"] = sh("git add -A && git commit -m 'Fix: root may log in'")
            continue
        said[command] = sh(command, stdin="y\n" if command == "harness-gate approve" else None)
        if command == "harness-gate review new":  # the reviewer, with a clean context, fills it in
            [review] = (project / "harness/plans/fix-login").glob("*-review.md")
            text = review.read_text()
            for placeholder, value in PLACEHOLDERS.items():
                text = text.replace(placeholder, value)
            review.write_text(text)

    assert "harness-gate (write boundary)....Passed" in re.sub(r"\.{5,}", "....", said["work"])  # the hook ran
    assert "harness-gate (pushed commits)" in said["git push -u origin HEAD"]
    assert "tests            PASS" in said["harness-gate verify"]

    ci = tmp_path / "ci"  # CI: a fresh clone of the pull request
    subprocess.run(["git", "clone", "-q", str(origin), str(ci)], check=True, capture_output=True)
    subprocess.run(["git", "checkout", "-q", "--detach", "origin/fix-login"], cwd=ci, check=True)
    argv = ["harness-gate", "check", "--stage", "ci", "--base", "origin/main", "--head", "HEAD"]
    proc = subprocess.run(argv, cwd=ci, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "harness-gate check: passed (0 blocking findings)" in proc.stdout
    report = json.loads(
        subprocess.run([*argv, "--format", "json"], cwd=ci, env=env, capture_output=True, check=True).stdout
    )
    # Judged, not waved through: the adopting commit is not, the plan, work, review and completion are.
    assert report["data"]["active"] is True and report["data"]["commits"] == 4
