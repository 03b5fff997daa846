"""Skills on disk: ``skills/NAME/SKILL.md`` (+ ``skill.yaml``), found by ``SkillRegistry``.

A workspace's ``skills/`` folder may hold several skills. The skills shipped with skillrag
(``skillrag/skills_builtin/*``) are also visible to a registry when the workspace has no folder
of the same name; ``install_builtin_skills`` copies them into the workspace to edit them.

A copy remembers what it was copied from (``.builtin.json``: the files' SHA-256 digest at copy time,
``COPY_STAMP``). A copy nobody edited (its files still hash to that digest) follows the package: when
the shipped skill has changed since (an upgrade), the registry loads the shipped one, so a workspace made
by an older skillrag never shows a manual out of step with its tools. An edited copy is the user's and is
loaded as it is (``Skill.outdated`` says the package ships a newer one; ``skill install --force`` takes it).

A skill may carry a ``references/`` bundle of curated Markdown notes; ``ingest_references`` stores
them as that skill's reference notes (``corpus.ingest(..., skill=NAME)``): ranked by retrieval
alongside the corpus, visible to that skill only, and cited with the ``url`` of their front matter.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from skillrag.errors import ConfigError, EmptyInputError, SkillNotFound
from skillrag.skill.config import SkillConfig, load_skill_config
from skillrag.skill.spec import check_front_matter, read_skill_md
from skillrag.workspace import Workspace

__all__ = ["COPY_STAMP", "Skill", "SkillRegistry", "builtin_skills_dir", "ingest_references", "install_builtin_skills", "load_skill",
           "render_manual", "skill_digest"]

#: Placeholders a SKILL.md may use (``${max_queries}``); ``render_manual`` fills them in.
MANUAL_FIELDS = ("max_queries", "max_fetches", "max_saves", "max_save_retries", "max_snippets", "k", "pages",
                 "page_articles")


@dataclass(frozen=True)
class Skill:
    """One loaded skill: front-matter ``name`` and ``description``, the SKILL.md body as
    ``manual``, the typed ``config`` (skill.yaml), its folder ``path``, and whether it is ``builtin``."""

    name: str
    description: str
    manual: str
    config: SkillConfig
    path: Path
    front_matter: dict[str, Any] = field(default_factory=dict)
    builtin: bool = False
    outdated: bool = False


#: The file in a workspace copy of a built-in skill that records the digest it was copied with.
COPY_STAMP = ".builtin.json"


def skill_digest(folder: Path) -> str:
    """SHA-256 (hex) over a skill folder's files (relative path and bytes, sorted; caches and
    ``COPY_STAMP`` left out): what tells an edited copy from an untouched one."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        if rel == COPY_STAMP or "__pycache__" in rel or rel.endswith(".pyc"):
            continue
        h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _copied_digest(folder: Path) -> str | None:
    """The digest ``COPY_STAMP`` records for a copy of a built-in skill (None: not a recorded copy)."""
    try:
        return str(json.loads((folder / COPY_STAMP).read_text(encoding="utf-8"))["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def render_manual(skill: Skill, limits: Any) -> str:
    """``skill.manual`` with its placeholders filled in (``string.Template``, safe: any other ``$``
    text stays as written): ``${max_queries}``, ``${max_fetches}``, ``${max_saves}``,
    ``${max_save_retries}`` from ``limits`` (a ``BudgetLimits``), ``${max_snippets}``, ``${k}``,
    ``${pages}`` and ``${page_articles}`` from the skill's settings. So the manual states the budgets that are enforced."""
    from string import Template

    c = skill.config
    values = {"max_queries": limits.max_queries, "max_fetches": limits.max_fetches, "max_saves": limits.max_saves,
              "max_save_retries": limits.max_save_retries, "max_snippets": c.max_snippets, "k": c.k,
              "pages": c.pages, "page_articles": c.page_articles}
    return Template(skill.manual).safe_substitute({k: str(v) for k, v in values.items()})


def builtin_skills_dir() -> Path:
    """The folder of skills shipped in the package (``skillrag/skills_builtin``)."""
    return Path(str(resources.files("skillrag") / "skills_builtin"))


def load_skill(folder: str | Path, *, builtin: bool = False) -> Skill:
    """Load the skill in ``folder``; raises ``ConfigError`` naming the folder and every problem
    of SKILL.md (missing front matter or field, name not matching the folder, over-long fields)
    or the first bad setting of skill.yaml (unknown setting, wrong type)."""
    folder = Path(folder)
    try:
        meta, body = read_skill_md(folder / "SKILL.md")
    except ValueError as exc:
        raise ConfigError(f"skill {folder.name!r}: {exc}") from None
    problems = check_front_matter(meta, folder.name)
    if problems:
        raise ConfigError(f"skill {folder.name!r}: " + "; ".join(problems))
    config = load_skill_config(folder / "skill.yaml")
    return Skill(
        name=meta["name"],
        description=meta["description"].strip(),
        manual=body,
        config=config,
        path=folder.resolve(),
        front_matter=meta,
        builtin=builtin,
    )


class SkillRegistry:
    """The skills a workspace can run: its ``skills/*/`` folders, then the built-in ones.

    ``get(name)`` loads one (``SkillNotFound`` if absent, ``ConfigError`` if broken);
    ``list()`` the valid ones; ``problems()`` the broken ones as ``{name: reason}``.
    """

    def __init__(self, ws: Workspace, *, include_builtin: bool = True) -> None:
        self.workspace = ws
        self.include_builtin = include_builtin

    def _folders(self) -> dict[str, tuple[Path, bool]]:
        found: dict[str, tuple[Path, bool]] = {}
        shipped: dict[str, Path] = {}
        base = builtin_skills_dir()
        if base.is_dir():
            shipped = {d.name: d for d in sorted(base.iterdir()) if (d / "SKILL.md").is_file()}
        if self.include_builtin:
            found.update({name: (d, True) for name, d in shipped.items()})
        self._outdated: set[str] = set()
        if self.workspace.skills_dir.is_dir():
            for d in sorted(self.workspace.skills_dir.iterdir()):
                if not d.is_dir() or d.name.startswith("."):
                    continue
                found[d.name] = (d, False)
                copied = _copied_digest(d)
                if copied is None or d.name not in shipped or skill_digest(shipped[d.name]) == copied:
                    continue  # the user's own skill, or a copy of the skill as shipped now
                if skill_digest(d) == copied:
                    found[d.name] = (shipped[d.name], True)  # an untouched copy follows the package
                else:
                    self._outdated.add(d.name)  # an edited copy stays the user's
        return dict(sorted(found.items()))

    def names(self) -> list[str]:
        """Names of every skill folder (valid or not), sorted."""
        return list(self._folders())

    def get(self, name: str) -> Skill:
        folders = self._folders()
        if name not in folders:
            have = ", ".join(folders) or "none"
            raise SkillNotFound(f"no skill named {name!r} (skills: {have})")
        path, builtin = folders[name]
        skill = load_skill(path, builtin=builtin)
        if name in self._outdated:
            from dataclasses import replace

            skill = replace(skill, outdated=True)
        return skill

    def list(self) -> list[Skill]:
        out = []
        for name in self._folders():
            try:
                out.append(self.get(name))
            except ConfigError:
                continue
        return out

    def problems(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name in self._folders():
            try:
                self.get(name)
            except ConfigError as exc:
                out[name] = str(exc)
        return out


def ingest_references(ws: Workspace, skill: Skill, *, on_file: Any = None) -> Any:
    """Ingest ``skill``'s ``references/*.md`` notes into ``ws`` as its reference notes and return the
    ``corpus.IngestReport``. Idempotent like any ingest; a note deleted from the folder is marked removed.

    Raises ``EmptyInputError`` when the skill has no ``references/`` folder or no note in it, and
    ``MalformedSourceError`` for a bad note (bad front matter, a ``url`` that is not http(s)).
    """
    from skillrag.corpus import ingest  # the one ingest path

    folder = skill.path / "references"
    if not folder.is_dir():
        raise EmptyInputError(f"skill {skill.name!r} has no references/ folder ({folder})")
    if not any(p.suffix.lower() in (".md", ".markdown") for p in folder.rglob("*") if p.is_file()):
        raise EmptyInputError(f"skill {skill.name!r}: no Markdown notes in {folder}")
    return ingest(ws, [folder], skill=skill.name, on_file=on_file)


def install_builtin_skills(ws: Workspace, *, overwrite: bool = False,
                           backups: list[Path] | None = None) -> list[str]:
    """Copy the built-in skills into ``ws.skills_dir``, each with its ``COPY_STAMP`` (see module doc);
    an existing folder is kept unless ``overwrite``. Returns the names copied. An existing folder that
    ``overwrite`` replaces is moved aside first, never deleted, unless it is an untouched copy (its files
    still hash to its stamp): edits survive as ``skills/.NAME.backup-N`` (appended to ``backups``)."""
    copied: list[str] = []
    base = builtin_skills_dir()
    ws.skills_dir.mkdir(parents=True, exist_ok=True)
    for d in sorted(base.iterdir()):
        if not (d / "SKILL.md").is_file():
            continue
        dest = ws.skills_dir / d.name
        if dest.exists():
            if not overwrite:
                continue
            stamped = _copied_digest(dest) if dest.is_dir() else None
            if stamped is not None and skill_digest(dest) == stamped:
                shutil.rmtree(dest)  # an untouched copy: nothing of the user's is in it
            else:  # found by a new user: --force threw edited manuals away without a word
                n = 1
                while (ws.skills_dir / f".{d.name}.backup-{n}").exists():
                    n += 1
                backup = ws.skills_dir / f".{d.name}.backup-{n}"
                dest.rename(backup)
                if backups is not None:
                    backups.append(backup)
        shutil.copytree(d, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (dest / COPY_STAMP).write_text(json.dumps({"skill": d.name, "sha256": skill_digest(d)}) + "\n",
                                       encoding="utf-8")
        copied.append(d.name)
    return copied
