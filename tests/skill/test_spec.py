"""``skill_folders``: which skill folders a path names."""

from __future__ import annotations

from skillrag.skill import skill_folders


def _skill(folder):
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: Use when testing.\n---\nBody.\n")
    return folder


def test_a_skill_folder_is_itself(tmp_path):
    one = _skill(tmp_path / "one")
    _skill(one / "nested")  # a skill's own sub-folders are not separate skills
    assert skill_folders(one) == [one]


def test_a_parent_folder_names_each_skill_folder_under_it(tmp_path):
    b, a = _skill(tmp_path / "out" / "b-skill"), _skill(tmp_path / "out" / "a-skill")
    (tmp_path / "out" / "notes").mkdir()  # no SKILL.md: not a skill
    (tmp_path / "out" / "README.md").write_text("x")
    assert skill_folders(tmp_path / "out") == [a, b]


def test_a_folder_with_no_skill_is_itself_so_its_check_reports_the_missing_file(tmp_path):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    assert skill_folders(tmp_path / "empty") == [tmp_path / "empty"]
    assert skill_folders(tmp_path / "missing") == [tmp_path / "missing"]
