"""Editor and shell support: the JSON Schemas' ids, the SchemaStore entry that hands the
configuration's schema to editors, and Tab completion of plan ids through click's own
completion machinery (docs/config.md, "Editors" and "Shell completion")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import ShellComplete

from harness_gate import schema
from harness_gate.cli import cli
from tests.helpers import Repo

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "harness_gate" / "schemas"
STORE = ROOT / "schemastore"


def test_every_schema_has_an_absolute_id_of_its_own() -> None:
    ids = {}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        doc = json.loads(path.read_text("utf-8"))
        name = path.name.removesuffix(".schema.json")
        # Absolute (a scheme), and naming the file: no two schemas resolve as one.
        assert doc["$id"] == f"urn:harness-gate:schema:{name}", path.name
        ids[doc["$id"]] = path.name
    assert len(ids) == len(list(SCHEMAS.glob("*.schema.json")))


def test_no_schema_refers_to_another_by_id() -> None:
    """Refs stay inside their own document (`#/$defs/...`): nothing resolves by an id."""
    for path in SCHEMAS.glob("*.schema.json"):
        text = path.read_text("utf-8")
        for line in text.splitlines():
            if '"$ref"' in line:
                assert '"$ref": "#/' in line, (path.name, line)


def test_the_schemastore_schema_is_the_shipped_one_with_the_stores_id() -> None:
    """`schemastore/harness-gate.json` is what a SchemaStore pull request adds: the
    package's configuration schema, under the id SchemaStore serves it at."""
    shipped = schema.load("config")
    store = json.loads((STORE / "harness-gate.json").read_text("utf-8"))
    entry = json.loads((STORE / "catalog-entry.json").read_text("utf-8"))
    assert store == {**shipped, "$id": entry["url"]}, (
        "schemastore/harness-gate.json is out of date: copy harness_gate/schemas/config.schema.json with "
        f'"$id": "{entry["url"]}"'
    )
    assert entry["fileMatch"] == [".harness-gate.toml"]
    assert set(entry) == {"name", "description", "fileMatch", "url"}


def test_every_documented_key_has_a_description_an_editor_can_show() -> None:
    props = schema.load("config")["properties"]
    page = (ROOT / "docs" / "config.md").read_text("utf-8")
    for key, spec in props.items():
        assert spec.get("description"), key
        assert f"`{key}`" in page or f"`[{key}." in page, key


def complete(args: list[str], incomplete: str) -> list[str]:
    completer = ShellComplete(cli, {}, "harness-gate", "_HARNESS_GATE_COMPLETE")
    return [item.value for item in completer.get_completions(args, incomplete)]


@pytest.fixture
def two_plans(repo: Repo) -> Repo:
    repo.write("README.md", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    assert repo.cli("init").exit_code == 0
    repo.new_plan("alpha")
    repo.new_plan("beta")
    repo.git("add", "-A")
    repo.new_plan("alpine")  # in the work tree only: not a plan the index holds
    return repo


def git_files(repo: Repo) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted((repo.path / ".git").rglob("*")) if p.is_file()}


def test_plan_options_complete_the_plans_the_index_holds(two_plans: Repo) -> None:
    before = git_files(two_plans)
    assert complete(["status", "--plan"], "") == ["alpha", "beta"]
    assert complete(["check", "--staged", "--plan"], "al") == ["alpha"]
    assert complete(["plan", "use"], "b") == ["beta"]
    assert complete(["review", "new", "--plan"], "z") == []
    # Tab writes nothing: no cache, no .git/config, no index refresh.
    assert git_files(two_plans) == before


def test_completion_follows_a_configured_artifacts_root(repo: Repo) -> None:
    repo.write(".harness-gate.toml", 'artifacts_dir = "meta/gate"\n')
    repo.write("meta/gate/plans/p1/plan.md", "x\n")
    repo.write("harness/plans/elsewhere/plan.md", "x\n")
    repo.git("add", "-A")
    assert complete(["status", "--plan"], "") == ["p1"]


@pytest.mark.parametrize("config", ["artifacts_dir = [", 'artifacts_dir = "../out"\n'])
def test_completion_fails_quietly_to_nothing(repo: Repo, config: str) -> None:
    repo.write(".harness-gate.toml", config)
    repo.write("harness/plans/p1/plan.md", "x\n")
    repo.git("add", "-A")
    assert complete(["status", "--plan"], "") == []


def test_outside_a_repository_there_is_nothing_to_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert complete(["status", "--plan"], "") == []


@pytest.mark.slow
def test_the_console_script_answers_the_shells_completion_protocol(two_plans: Repo) -> None:
    """What bash's completion function runs on Tab (`eval "$(_HARNESS_GATE_COMPLETE=bash_source
    harness-gate)"` installs it): the real entry point, not the click group alone."""
    env = {
        **os.environ,
        "_HARNESS_GATE_COMPLETE": "bash_complete",
        "COMP_WORDS": "harness-gate verify --plan a",
        "COMP_CWORD": "3",
    }
    script = "import sys; from harness_gate.entry import main; sys.exit(main())"
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=two_plans.path, capture_output=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().split() == ["plain,alpha"]
    assert out.stderr == b""
    source = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "_HARNESS_GATE_COMPLETE": "bash_source"},
        capture_output=True,
        check=False,
    )
    assert source.returncode == 0
    assert b"_HARNESS_GATE_COMPLETE=bash_complete" in source.stdout
