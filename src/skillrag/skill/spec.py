"""Checks of a skill folder against the Agent Skills specification (agentskills.io).

The rules checked (each failure is one reason string):

* ``SKILL.md`` exists and starts with YAML front matter (``---`` … ``---``) that is a mapping;
* ``name``: 1–64 characters, lowercase letters, digits and hyphens, no leading/trailing or
  doubled hyphen, equal to the folder's name;
* ``description``: a non-empty string of at most 1024 characters that says *when* to use the
  skill (contains "use when", "use this skill when" or "when ...");
* only the spec's front-matter keys: ``name``, ``description``, ``license``, ``compatibility``
  (≤ 500 characters), ``metadata`` (string → string map), ``allowed-tools``;
* a non-empty body, and every ``scripts/…`` or ``references/…`` path it mentions exists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import frontmatter
import yaml

from skillrag.workspace.ids import ID_RULES, is_id

__all__ = [
    "FRONT_MATTER_KEYS",
    "NAME_PATTERN",
    "check_front_matter",
    "check_skill_folder",
    "read_skill_md",
    "skill_folders",
]

#: A skill name: the ``skill`` rule of ``skillrag.workspace.ids`` (anchored: no trailing newline).
NAME_PATTERN: re.Pattern[str] = ID_RULES["skill"].regex
FRONT_MATTER_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
_WHEN = re.compile(r"\bwhen\b", re.IGNORECASE)
_PATH_REF = re.compile(r"\b((?:scripts|references|assets)/[A-Za-z0-9_.\-/]+[A-Za-z0-9_])")


def read_skill_md(path: Path) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a SKILL.md; raises ``ValueError`` with a reason."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path.name}: missing") from None
    if not text.lstrip().startswith("---"):
        raise ValueError(f"{path.name}: no YAML front matter (must start with ---)")
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{path.name}: front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    return dict(post.metadata), post.content


def check_front_matter(meta: dict[str, Any], folder_name: str | None) -> list[str]:
    """Reasons the front matter breaks the spec (empty = conforms)."""
    reasons: list[str] = []
    name = meta.get("name")
    if name is None:
        reasons.append("front matter: missing field 'name'")
    elif not isinstance(name, str) or not name:
        reasons.append("front matter: 'name' must be a non-empty string")
    else:
        if len(name) > 64:
            reasons.append(f"front matter: name {name!r} is {len(name)} characters, at most 64 allowed")
        elif not is_id(name, "skill"):
            reasons.append(
                f"front matter: name {name!r} must be lowercase letters, digits and single hyphens"
            )
        if folder_name is not None and name != folder_name:
            reasons.append(f"front matter: name {name!r} does not match its folder {folder_name!r}")
    desc = meta.get("description")
    if desc is None:
        reasons.append("front matter: missing field 'description'")
    elif not isinstance(desc, str) or not desc.strip():
        reasons.append("front matter: 'description' must be a non-empty string")
    else:
        if len(desc) > 1024:
            reasons.append(f"front matter: description is {len(desc)} characters, at most 1024 allowed")
        if not _WHEN.search(desc):
            reasons.append("front matter: description must say when to use the skill (e.g. 'Use when ...')")
    for key in meta:
        if key not in FRONT_MATTER_KEYS:
            reasons.append(f"front matter: unknown field {key!r} (allowed: {', '.join(FRONT_MATTER_KEYS)})")
    comp = meta.get("compatibility")
    if comp is not None and (not isinstance(comp, str) or len(comp) > 500):
        reasons.append("front matter: 'compatibility' must be a string of at most 500 characters")
    md = meta.get("metadata")
    if md is not None and (
        not isinstance(md, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in md.items())
    ):
        reasons.append("front matter: 'metadata' must map strings to strings")
    return reasons


def skill_folders(folder: str | Path) -> list[Path]:
    """The skill folders ``folder`` names: itself when it holds a ``SKILL.md`` (or holds no skill
    folder at all, so that checking it reports what is missing), else each immediate sub-folder that
    holds one, by name: ``skillrag skill export NAME DIR`` writes ``DIR/NAME``, so ``DIR`` works too."""
    folder = Path(folder)
    if not folder.is_dir() or (folder / "SKILL.md").exists():
        return [folder]
    found = sorted(p for p in folder.iterdir() if p.is_dir() and (p / "SKILL.md").is_file())
    return found or [folder]


def check_skill_folder(folder: str | Path) -> list[str]:
    """Every way the folder breaks the Agent Skills rules (empty = conforms)."""
    folder = Path(folder)
    if not folder.is_dir():
        return [f"{folder}: not a folder"]
    try:
        meta, body = read_skill_md(folder / "SKILL.md")
    except ValueError as exc:
        return [str(exc)]
    reasons = check_front_matter(meta, folder.resolve().name)
    if not body.strip():
        reasons.append("SKILL.md: the body (the instructions) is empty")
    for ref in sorted(set(_PATH_REF.findall(body))):
        if not (folder / ref).exists():
            reasons.append(f"SKILL.md: mentions {ref}, which is not in the folder")
    for cfg in (folder / "skill.yaml", folder / "references" / "skill.yaml"):
        if cfg.is_file():  # skillrag's own settings: an unknown key would fail every run
            from skillrag.errors import ConfigError
            from skillrag.skill.config import load_skill_config

            try:
                load_skill_config(cfg)
            except ConfigError as exc:
                reasons.append(str(exc))
    return reasons
