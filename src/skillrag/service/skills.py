"""What the service needs from a skill, and how a question selects one (``/slug`` or ``skill``).

``SkillView`` is the service's read-only view of one skill: its manual (SKILL.md body, the system
prompt of a model chat), its retrieval settings and its ``SourcePolicy`` (which article sources
retrieval may read, and the web mode and allowlist). ``RegistryCatalog`` adapts
``skillrag.skill.SkillRegistry``; tests use ``skillrag.service.testing.StaticCatalog``.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from skillrag.corpus import SourceScope
from skillrag.errors import ConfigError, EmptyInputError, SkillNotFound
from skillrag.service.allowlist import HostAllowlist
from skillrag.workspace.config import MAX_K
from skillrag.workspace.ids import is_id

__all__ = ["RegistryCatalog", "SkillCatalog", "SkillView", "SourcePolicy", "ViewCatalog", "parse_slug", "select_skill"]

log = logging.getLogger("skillrag.service")

class SourcePolicy(BaseModel):
    """Which sources a chat may read.

    ``allowed_sources``: article ``source_tag`` values retrieval may return (none = all);
    ``web_mode``: ``off`` (never), ``fallback`` (only when retrieval found nothing relevant, at most
    once per turn) or ``always`` (every turn, once); both need the request's ``web_search`` toggle;
    ``web_allowlist``: the only hosts the web may read (exact host or subdomain; IPv6 literals in
    brackets); ``allow_private``: ``service.web_allow_private``, without which a private, loopback or
    link-local entry is refused (``ConfigError``, see ``allowlist.HostAllowlist``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    allowed_sources: list[str] | None = Field(None, description="Article source tags retrieval may read.")
    web_mode: Literal["off", "fallback", "always"] = Field("off", description="When the web may be read.")
    allow_private: bool = Field(False, description="service.web_allow_private: private addresses may be listed.")
    web_allowlist: list[str] = Field(default_factory=list, description="Host names the web may read.")

    @field_validator("web_allowlist")
    @classmethod
    def _hosts(cls, v: list[str], info: ValidationInfo) -> list[str]:
        return list(HostAllowlist(v, allow_private=bool(info.data.get("allow_private"))).hosts)

    def allowlist(self) -> HostAllowlist:
        return HostAllowlist(self.web_allowlist, allow_private=self.allow_private)


class SkillView(BaseModel):
    """One skill as the service uses it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    manual: str = Field("", description="SKILL.md body: the system prompt of a model chat under this skill.")
    backend: Literal["wiki", "direct"] | None = Field(None, description="Search backend; none = workspace default.")
    mode: Literal["hybrid", "bm25", "dense"] | None = Field(None, description="Retrieval mode; none = default.")
    k: int = Field(8, ge=1, le=MAX_K, description="Hits per retrieval, in article ids.")
    max_snippets: int = Field(4, ge=1, le=50, description="Quotes in an extractive answer.")
    min_snippet_chars: int = Field(40, ge=1, description="Shortest quote, in characters.")
    policy: SourcePolicy = Field(default_factory=SourcePolicy)

    def scope(self) -> SourceScope:
        """The articles a chat under this view may search, read and cite (``corpus.SourceScope``): its
        ``allowed_sources`` and, for a named skill, its own reference notes."""
        return SourceScope.of(self.name, self.policy.allowed_sources)


@runtime_checkable
class SkillCatalog(Protocol):
    """The registered skills: ``names()`` (sorted) and ``get(name)`` (``SkillNotFound`` if unknown)."""

    def names(self) -> list[str]: ...

    def get(self, name: str) -> SkillView: ...


def _field(obj: Any, *names: str, default: Any = None) -> Any:
    for n in names:
        if obj is not None and getattr(obj, n, None) is not None:
            return getattr(obj, n)
    return default


def view_of(skill: Any, web: Any | None = None, *, allow_private: bool = False,
            web_source: str | None = None) -> SkillView:
    """A ``SkillView`` from a ``skillrag.skill.Skill`` (reads ``.name``, ``.description``, ``.manual``
    and the retrieval and source fields of ``.config``).

    The web policy comes from ``skill.config.web_mode``/``web_allowlist`` when the skill declares them,
    else from ``web`` (a ``SkillWebSettings``: ``service.skill_web.<name>`` in ``skillrag.yaml``, which
    ``web_source`` names), else off. ``allow_private``: ``service.web_allow_private``.

    Raises ``ConfigError``, one line naming the skill and the file its bad setting came from
    (``skills/NAME/skill.yaml`` or ``web_source``).
    """
    cfg = getattr(skill, "config", None)
    sources = _field(cfg, "allowed_sources")
    if sources is not None and not isinstance(sources, list | tuple):
        sources = _field(sources, "source_tags")
    folder = getattr(skill, "path", None)
    skill_yaml = str(folder / "skill.yaml") if folder is not None else "skill.yaml"
    hosts_from = skill_yaml if _field(cfg, "web_allowlist") is not None or web is None else (
        web_source or f"service.skill_web.{skill.name}")
    try:
        return SkillView(
            name=skill.name,
            description=getattr(skill, "description", "") or "",
            manual=getattr(skill, "manual", "") or "",
            backend=_field(cfg, "backend"),
            mode=_field(cfg, "mode"),
            k=_field(cfg, "k", default=8),
            max_snippets=_field(cfg, "max_snippets", default=4),
            min_snippet_chars=_field(cfg, "min_snippet_chars", default=40),
            policy=SourcePolicy(
                allowed_sources=list(sources) if sources else None,
                web_mode=_field(cfg, "web_mode", default=_field(web, "web_mode", default="off")),
                allow_private=allow_private,
                web_allowlist=list(_field(cfg, "web_allowlist", default=_field(web, "web_allowlist", default=[]))),
            ),
        )
    except ConfigError as exc:  # a bad web_allowlist entry (HostAllowlist)
        raise ConfigError(f"skill {skill.name} ({hosts_from}): {exc}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"skill {skill.name} ({skill_yaml}): {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


class ViewCatalog:
    """A ``SkillCatalog`` over the given views (``StaticCatalog`` in tests; ``RegistryCatalog`` reads them
    from the workspace)."""

    def __init__(self, views: list[SkillView]) -> None:
        self._views = {v.name: v for v in views}

    def names(self) -> list[str]:
        return sorted(self._views)

    def get(self, name: str) -> SkillView:
        """The view of skill ``name``; ``SkillNotFound`` naming the known skills."""
        try:
            return self._views[name]
        except KeyError:
            raise SkillNotFound(f"no skill named {name!r} (known: {', '.join(self.names()) or 'none'})") from None


class RegistryCatalog(ViewCatalog):
    """``SkillCatalog`` over ``skillrag.skill.SkillRegistry(ws)``: scans the valid skills once, at start-up
    (a broken skill folder is left out and logged; restart to pick up changes). A skill whose web policy
    is invalid stops start-up: ``ConfigError`` naming the skill and the file (``view_of``)."""

    def __init__(self, workspace: Any) -> None:
        from skillrag.skill import SkillRegistry

        registry = SkillRegistry(workspace)
        service = workspace.config.service
        web = service.skill_web
        config_file = getattr(workspace, "config_path", "skillrag.yaml")
        super().__init__([
            view_of(sk, web.get(sk.name), allow_private=service.web_allow_private,
                    web_source=f"{config_file}: service.skill_web.{sk.name}")
            for sk in registry.list()
        ])
        self.problems: dict[str, str] = registry.problems()
        for name, why in self.problems.items():
            log.warning("skill %s not loaded: %s", name, why)
        for name in web:
            if name not in self._views:
                log.warning("service.skill_web names %r, which is not a loaded skill", name)


def parse_slug(question: str) -> tuple[str | None, str]:
    """``("slug", rest)`` when ``question`` starts with ``/``, else ``(None, question)``.

    Strict, like a slash command: the slug is everything from the ``/`` to the first white space, and
    it must be a whole skill name. ``/nosuch, card fee``, ``/unknown?`` and ``/-x`` are not a question
    that happens to start with a slash: they raise ``SkillNotFound`` (HTTP 400), as an unknown name does.
    """
    text = (question or "").lstrip()
    if not text.startswith("/"):
        return None, question
    parts = text[1:].split(maxsplit=1) if text[1:2].strip() else []
    token, rest = (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")
    if not is_id(token, "skill"):  # what follows the '/' up to the first white space must be all of it
        shown = token if len(token) <= 40 else token[:40] + "..."
        raise SkillNotFound(f"/{shown} does not name a skill: a question that starts with '/' must start with "
                            "'/skill-name' and a space")
    return token, rest


def select_skill(catalog: SkillCatalog, question: str, skill: str | None) -> tuple[SkillView | None, str]:
    """The skill a chat runs under and the question without its ``/slug``.

    An explicit ``skill`` wins over a slug (the slug token is still removed). An unknown explicit
    skill, a malformed slug or an unknown slug (even next to an explicit skill) raises ``SkillNotFound``
    (HTTP 400), never a silent fallback to a plain chat. An empty question raises ``EmptyInputError``.
    """
    slug, rest = parse_slug(question)
    slug_view = catalog.get(slug) if slug else None
    view = catalog.get(skill) if skill else slug_view
    text = rest.strip()
    if not text:
        raise EmptyInputError("the question is empty")
    return view, text
