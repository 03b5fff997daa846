"""docs/: the generated references match the code, and the README keeps to its size and its markers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


gen = _load(DOCS / "gen.py", "docs_gen")


@pytest.mark.parametrize("name", sorted(gen.TARGETS))
def test_generated_reference_is_current(name):
    committed = (DOCS / name).read_text(encoding="utf-8")
    assert gen.render(name, committed) == committed, f"docs/{name} is stale: run `python docs/gen.py`"


def test_config_reference_has_every_setting_with_type_and_default():
    from skillrag.workspace.config import WorkspaceConfig

    table = gen.config_reference()
    for section, field in WorkspaceConfig.model_fields.items():
        for key in getattr(field.annotation, "model_fields", {}):
            assert f"| `{section}.{key}` |" in table
    assert '| `search.rrf_k` | int | 60 | ≥ 1 | Reciprocal rank fusion constant k' in table
    assert '| `search.backend` | "wiki" \\| "direct" | "wiki" |' in table
    assert "| `service.skill_web.NAME.web_mode` |" in table  # a dict of sections: its inner keys too
    assert "### `skills/NAME/skill.yaml`" in table and "| `budgets.max_fetches` | int \\| None | null | ≥ 0 |" in table


def test_cli_reference_has_every_command_and_option():
    text = gen.cli_reference()
    for heading in ("### `skillrag cases import`", "### `skillrag wiki agent next`", "### `skillrag eval score`"):
        assert heading in text
    assert "| `--map <list[str]>` |" in text and "ground_truth.extra" in text


def test_render_refuses_a_file_without_markers():
    with pytest.raises(SystemExit, match="no .* markers"):
        gen.render("cli.md", "# CLI\n")


def test_readme_is_short_and_keeps_its_commands_and_bench_markers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 350
    assert "make demo" in readme and "make test" in readme
    upd = _load(ROOT / "benchmarks" / "update_readme.py", "update_readme")
    for path in upd.TARGETS:
        text = path.read_text(encoding="utf-8")
        assert upd.START in text and upd.END in text, path


def test_readme_links_resolve():
    import re

    for path in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            assert (path.parent / target).exists(), f"{path.name}: broken link {target}"


def test_case_format_examples_import_and_load(tmp_path):
    """docs/cases.md's examples: the case file loads, and importing the source with its mapping (YAML, or the
    --map options the page gives) writes exactly the output it shows."""
    import re

    from skillrag.cli.main import main
    from skillrag.skill import CaseFile

    page = (DOCS / "cases.md").read_text(encoding="utf-8")
    examples = dict(re.findall(r"<!-- example: (\S+) -->\n```\w*\n(.*?)```", page, re.DOTALL))
    assert set(examples) == {"cases.jsonl", "dialogues.json", "mapping.yaml", "imported.jsonl"}
    for name, body in examples.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    assert CaseFile(tmp_path / "cases.jsonl").load("c1").case_messages[0].content.startswith("My bookcase")
    src = str(tmp_path / "dialogues.json")
    assert main(["cases", "import", src, "--mapping", str(tmp_path / "mapping.yaml"), "-o", str(tmp_path / "a.jsonl")]) == 0
    assert (tmp_path / "a.jsonl").read_text(encoding="utf-8") == examples["imported.jsonl"]
    opts = re.search(r"The same without a mapping file: `(.*?)`", page, re.DOTALL).group(1).split()
    assert main(["cases", "import", src, "-o", str(tmp_path / "b.jsonl"), *opts]) == 0
    expected = [json.loads(x) for x in examples["imported.jsonl"].splitlines()]
    for rec in expected:
        rec["case_notes"] = []  # the {label: path} notes need the YAML
    assert [json.loads(x) for x in (tmp_path / "b.jsonl").read_text().splitlines()] == expected
