"""Skill folders and the registry: built-ins, several skills, and clear errors for bad ones."""

from __future__ import annotations

import pytest

from skillrag.errors import ConfigError, SkillNotFound
from skillrag.skill import SkillRegistry, builtin_skills_dir, check_skill_folder, install_builtin_skills

GOOD = "---\nname: {name}\ndescription: Answers billing questions. Use when a case is about billing.\n---\n\n# Body\n"


def _write(ws, name, skill_md, yaml_text=None):
    d = ws.skills_dir / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(skill_md, encoding="utf-8")
    if yaml_text is not None:
        (d / "skill.yaml").write_text(yaml_text, encoding="utf-8")
    return d


def test_builtin_cs_guidance_loads_and_conforms(ws):
    s = SkillRegistry(ws).get("cs-guidance")
    assert s.builtin and s.name == "cs-guidance"
    assert s.config.max_snippets == 15 and s.config.min_snippet_chars == 15
    assert "save_output" in s.manual and "skillrag tool save-output" in s.manual
    assert len(s.description) <= 1024
    assert check_skill_folder(builtin_skills_dir() / "cs-guidance") == []


def test_install_copies_and_workspace_copy_wins(ws):
    first = install_builtin_skills(ws)
    assert "cs-guidance" in first and (ws.skills_dir / "cs-guidance" / "SKILL.md").is_file()
    assert install_builtin_skills(ws) == []
    md = ws.skills_dir / "cs-guidance" / "skill.yaml"
    md.write_text("k: 3\n", encoding="utf-8")
    s = SkillRegistry(ws).get("cs-guidance")
    assert not s.builtin and s.config.k == 3


def test_several_skills(ws):
    _write(ws, "billing", GOOD.format(name="billing"), "k: 4\nallowed_sources: [kb]\n")
    reg = SkillRegistry(ws)
    names = [s.name for s in reg.list()]
    assert "billing" in names and "cs-guidance" in names
    assert reg.get("billing").config.allowed_sources == ["kb"]
    assert reg.problems() == {}


@pytest.mark.parametrize(
    ("folder", "skill_md", "yaml_text", "match"),
    [
        ("b1", "---\ndescription: Use when x.\n---\nbody\n", None, "missing field 'name'"),
        ("b2", "---\nname: b2\n---\nbody\n", None, "missing field 'description'"),
        ("b3", GOOD.format(name="other"), None, "does not match its folder 'b3'"),
        ("b4", GOOD.format(name="b4"), "k: 5\nretrieval_depth: 9\n", "retrieval_depth: unknown setting"),
        ("b5", GOOD.format(name="b5"), "k: many\n", "k: Input should be a valid integer"),
        ("b6", "no front matter at all\n", None, "no YAML front matter"),
        ("Bad_Name", GOOD.format(name="Bad_Name"), None, "lowercase letters, digits and single hyphens"),
        ("b8", GOOD.format(name="b8"), "budgets: {max_queries: 0}\n", "budgets.max_queries"),
    ],
)
def test_bad_skills_give_clear_errors(ws, folder, skill_md, yaml_text, match):
    _write(ws, folder, skill_md, yaml_text)
    reg = SkillRegistry(ws)
    with pytest.raises(ConfigError, match=match) as ei:
        reg.get(folder)
    assert "\n" not in str(ei.value) and folder in str(ei.value)
    assert folder in reg.problems()
    assert folder not in [s.name for s in reg.list()]


def test_unknown_skill(ws):
    with pytest.raises(SkillNotFound, match="no skill named 'nope'.*cs-guidance"):
        SkillRegistry(ws).get("nope")


def test_an_untouched_copy_follows_the_package_and_an_edited_one_stays(tmp_path, monkeypatch):
    """A workspace made by an older skillrag: its untouched copy of a built-in skill shows the manual the
    package ships now (no manual out of step with the tools); an edited copy is the user's."""
    import shutil

    from skillrag.skill import install_builtin_skills
    from skillrag.skill import registry as reg
    from skillrag.workspace import Workspace

    shipped = tmp_path / "shipped"
    shutil.copytree(reg.builtin_skills_dir(), shipped, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(reg, "builtin_skills_dir", lambda: shipped)
    ws = Workspace.init(tmp_path / "ws")
    assert "cs-guidance" in install_builtin_skills(ws)
    copy = ws.skills_dir / "cs-guidance"
    assert (copy / reg.COPY_STAMP).is_file()
    assert SkillRegistry(ws).get("cs-guidance").path == copy.resolve()  # the package has not changed
    # an upgrade ships a new manual
    md = shipped / "cs-guidance" / "SKILL.md"
    md.write_text(md.read_text(encoding="utf-8") + "\nA rule added by the upgrade.\n", encoding="utf-8")
    got = SkillRegistry(ws).get("cs-guidance")
    assert "A rule added by the upgrade." in got.manual and not got.outdated
    # the user edits their copy: it is theirs, and it says a newer one is shipped
    (copy / "SKILL.md").write_text((copy / "SKILL.md").read_text(encoding="utf-8") + "\nOur own rule.\n",
                                   encoding="utf-8")
    got = SkillRegistry(ws).get("cs-guidance")
    assert "Our own rule." in got.manual and "A rule added by the upgrade." not in got.manual and got.outdated


def test_install_force_keeps_an_edited_copy_aside_and_replaces_an_untouched_one(tmp_path):
    """Found by a new user: `skill install --force` deleted an edited SKILL.md without a word."""
    from skillrag.workspace import Workspace

    ws = Workspace.init(tmp_path / "ws")
    install_builtin_skills(ws)
    edited = ws.skills_dir / "cs-guidance" / "SKILL.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nOur own rule.\n", encoding="utf-8")
    backups: list = []
    assert "cs-guidance" in install_builtin_skills(ws, overwrite=True, backups=backups)
    assert backups == [ws.skills_dir / ".cs-guidance.backup-1"]  # evidence-qa was untouched: no backup
    assert "Our own rule." in (backups[0] / "SKILL.md").read_text(encoding="utf-8")
    assert "Our own rule." not in edited.read_text(encoding="utf-8")
    assert SkillRegistry(ws).names() == ["cs-guidance", "evidence-qa"]  # the backup is no skill
