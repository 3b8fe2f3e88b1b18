"""The docs stay in step with the code they describe."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import harness_gate
from harness_gate.artifacts.kinds import KINDS
from harness_gate.findings import FAMILIES, RULES, rule_anchor
from harness_gate.lifecycle import PlanState

DOCS = Path(__file__).resolve().parent.parent / "docs"


RULES_HEADER = """\
# Rule codes

Every finding carries a stable rule code; a code is never reused for another meaning.
Families: `HG1xx` boundary, `HG2xx` plan and approval, `HG3xx` evidence, `HG4xx` review and lifecycle,
`HG5xx` artifact syntax, `HG6xx` other harness formats, `HG9xx` environment and internal.
Findings block (exit 1); `HG9xx` conditions that stop a command exit 2.

Always blocked, whatever the boundary says: HG103, HG104, HG105 (unless named exactly), HG106.

Each code below is an anchor (`rules.md#hg101`): the JSON report's `rule_url` and the SARIF
rules' `helpUri` link to it. The report formats themselves: [report.md](report.md).
"""


def render_rules() -> str:
    """docs/rules.md as the catalogue in harness_gate/catalogue/ says it must read."""
    out = [RULES_HEADER]
    family = ""
    for code, rule in RULES.items():
        if code[:3] != family:
            family = code[:3]
            out.append(f"\n## {family}xx: {FAMILIES[family]}\n\n| code | meaning | how to fix |\n|---|---|---|\n")
        hint = rule.hint.replace("|", "\\|")
        # An HTML anchor per row: a table row has no heading to link to (GitHub keeps the
        # id, prefixed `user-content-`, and still scrolls to `#hg101`).
        out.append(f'| <a id="{rule_anchor(code)}"></a>{code} | {rule.title} | {hint} |\n')
    return "".join(out)


def test_rules_doc_is_the_catalogue() -> None:
    assert (DOCS / "rules.md").read_text() == render_rules(), "regenerate: python -m tests.test_docs"


if __name__ == "__main__":
    (DOCS / "rules.md").write_text(render_rules())


def test_artifact_reference_lists_every_kind_and_section() -> None:
    text = (DOCS / "artifacts.md").read_text()
    for kind in KINDS.values():
        assert f"# {kind.title}" in text
        for section in kind.sections:
            assert f"## {section.title}" in text, (kind.title, section.title)
        if kind.gate_line:
            assert kind.gate_line in text


def test_readme_quick_start_has_the_two_commands() -> None:
    readme = (DOCS.parent / "README.md").read_text()
    assert "pip install . && harness-gate demo" in readme
    assert "pip install -e '.[test]' && python -m pytest" in readme
    assert "python -m pytest" in (DOCS.parent / ".ci" / "run").read_text()


def test_threat_model_names_only_catalogued_codes() -> None:
    """Every rule code the threat model cites exists, and every signing rule is cited."""
    import re

    from harness_gate.findings import RULES

    text = (DOCS / "threat-model.md").read_text()
    cited = set(re.findall(r"HG[0-9]{3}", text))
    assert cited <= set(RULES), sorted(cited - set(RULES))
    assert {"HG213", "HG214", "HG215", "HG216", "HG217", "HG218", "HG219", "HG220", "HG906"} <= cited


def test_the_hooks_readme_and_docs_show_are_the_manifests() -> None:
    """README's hook table and snippet, and docs/hooks.md's table, say what hooks.py renders."""
    import re

    from harness_gate.hooks import HOOKS, INSTALL_TYPES

    readme = (DOCS.parent / "README.md").read_text()
    assert f"default_install_hook_types: [{', '.join(INSTALL_TYPES)}]" in readme
    hooks_doc = (DOCS / "hooks.md").read_text()
    for hook in HOOKS:
        [row] = re.findall(rf"^\| `{re.escape(hook.id)}` \| ([^|]*) \|", readme, re.M)
        assert [s.strip() for s in row.split(",")] == list(hook.stages), hook.id
        [row] = re.findall(rf"^\| `{re.escape(hook.id)}` \| ([^|]*) \|", hooks_doc, re.M)
        assert [s.strip(" `") for s in row.split(",")] == [*hook.stages, "manual"], hook.id


# A code name in the glossary: `module.Name` (relative to harness_gate/) or a bare `Name`,
# where Name is a class (CamelCase) or a constant (UPPER_CASE).
_CODE_NAME = re.compile(r"`((?:[a-z_][a-z0-9_]*\.)*)([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*|[A-Z][A-Z0-9_]+)`")


def _package_classes() -> set[str]:
    names: set[str] = set()
    for info in pkgutil.walk_packages(harness_gate.__path__, "harness_gate."):
        if info.name.endswith("__main__"):
            continue  # running it is its import
        module = importlib.import_module(info.name)
        names.update(n for n, v in vars(module).items() if inspect.isclass(v) and v.__module__ == info.name)
    return names


def test_the_glossary_names_only_what_the_code_defines() -> None:
    """Every class or constant docs/glossary.md gives as a term's code name exists where it
    says (`module.Name`), or, named bare, is a class of the package: renaming one in the
    code without the glossary fails here."""
    text = (DOCS / "glossary.md").read_text("utf-8")
    named = _CODE_NAME.findall(text)
    classes = _package_classes()
    missing = []
    for module, name in named:
        if not module:
            if name[0].isupper() and not name.isupper() and name not in classes:
                missing.append(name)
            continue
        try:
            value = getattr(importlib.import_module("harness_gate." + module.rstrip(".")), name)
        except (ImportError, AttributeError):
            missing.append(module + name)
            continue
        if not name.isupper():
            assert inspect.isclass(value), f"{module}{name} is not a class"
    assert missing == []
    assert sum(1 for module, _ in named if module) > 20, "the code names were found"


def test_the_glossary_lists_every_plan_state() -> None:
    text = (DOCS / "glossary.md").read_text("utf-8")
    assert [s.value for s in PlanState if f"- `{s.value}`: " not in text] == []


def test_the_readme_and_contributing_link_the_glossary() -> None:
    root = DOCS.parent
    for name in ("README.md", "CONTRIBUTING.md"):
        assert "docs/glossary.md" in (root / name).read_text("utf-8"), name


def _layout_names() -> list[str]:
    """The module and folder paths README's "Layout" tree draws (`commands/check.py`, `git/`)."""
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    tree = readme.split("## Layout", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    out: list[str] = []
    folder = ""
    for line in tree.strip("\n").splitlines()[1:]:  # after the `harness_gate/` line
        m = re.match(r"([│ ]*)[├└]── (\S+)", line)
        assert m is not None, f"not a tree line: {line!r}"
        depth, name = len(m.group(1)) // 4, m.group(2)
        if depth == 0:
            folder = name if name.endswith("/") else ""
            out.append(name)
        else:
            out.append(folder + name)
    return out


def test_the_readme_layout_draws_every_module_and_only_those() -> None:
    package = Path(harness_gate.__file__).parent
    drawn = set(_layout_names())
    folders = {p.name + "/" for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    top = {p.name for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    # Every folder with modules (artifacts/, commands/, formats/, git/) is opened and lists
    # each of them; a folder of data alone (schemas/) stays one line.
    inner = {f"{f}{p.name}" for f in folders for p in (package / f).glob("*.py") if p.name != "__init__.py"}
    assert drawn == top | folders | inner


def _yaml_blocks(text: str) -> list[str]:
    return re.findall(r"^```ya?ml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_every_workflow_the_docs_show_has_a_timeout_on_each_job() -> None:
    """A job without `timeout-minutes` runs for GitHub's default of six hours when stuck."""
    import yaml  # pre-commit's own dependency

    pages = [DOCS.parent / "README.md", *sorted(DOCS.rglob("*.md"))]
    jobs_seen = 0
    for page in pages:
        for block in _yaml_blocks(page.read_text()):
            doc = yaml.safe_load(block)
            if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
                continue
            for name, job in doc["jobs"].items():
                jobs_seen += 1
                minutes = job.get("timeout-minutes")
                assert isinstance(minutes, int) and 0 < minutes <= 60, (page.name, name)
    assert jobs_seen >= 4  # README's, and action.md's two workflows (three jobs)


def test_the_site_navigation_lists_every_page() -> None:
    """mkdocs.yml's nav (mkdocs build --strict in .ci/run checks the links and anchors)."""
    nav = (DOCS.parent / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*([\w/-]+\.md)\s*$", nav, flags=re.MULTILINE))
    assert listed == {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
