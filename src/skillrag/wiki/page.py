"""The page model of the navigation layer and its Markdown file format.

A page is one Markdown file, ``wiki/pages/<page-id>.md``, that a person can read, diff and edit::

    ---
    id: credit-cards-gold-rewards-card
    title: Gold Rewards Card (credit cards)
    kind: entity
    variant: full
    builder: extractive
    model: null
    built_from: {doc_credit_cards_gold_rewards_card_001: 3f2a…}   # article id -> content hash
    ---
    # Gold Rewards Card

    ## Intent
    One paragraph: what the workflow is for.

    ## Solves
    - a situation this page resolves

    ## Does not solve
    - a situation it does not (and where to look instead)

    ## Procedure
    1. A step in the page's own words. [eligibility: doc_a_001] [fee: doc_a_002]

    ## Links
    - [policy: doc_a_003]          (page-level links; only the ``pooled-links`` variant uses them)

    ## Sources
    - doc_a_001 — Title of the article — _one line on what it covers_

Kinds: an ``entity`` page covers one product or topic family and lists **all** its articles; an
``aspect`` page lists, for one aspect shared by sibling entities (a referral programme, ATM fees),
every entity's article with its key line, so products can be compared in one read; a ``topic`` page
is any other group of articles (the default, and what a one-article family gets).

Typed links are ``[TYPE: ARTICLE-ID]`` with TYPE from :class:`LinkType`. ``render_page`` and
``parse_page`` round-trip: ``parse_page(render_page(p)) == p`` for every valid page.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import StrEnum
from typing import Annotated, Literal

import frontmatter
import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from skillrag.errors import InvalidIdError, WorkspaceError
from skillrag.workspace.ids import ID_RULES, check_id, is_id

__all__ = [
    "LINK_RE",
    "PAGE_KINDS",
    "Link",
    "LinkType",
    "Page",
    "PageKind",
    "SourceRef",
    "Step",
    "check_page_id",
    "parse_page",
    "render_page",
    "slugify",
]

#: Page ids: lower-case letters, digits and single dashes (also the file name, ``<id>.md``); the
#: ``page`` rule of ``skillrag.workspace.ids`` (anchored with ``\A…\Z``: no trailing newline).
PAGE_ID_PATTERN: re.Pattern[str] = ID_RULES["page"].regex


class LinkType(StrEnum):
    """What a cited article contributes to the claim or step that links to it."""

    procedure = "procedure"  # how to carry out a step
    eligibility = "eligibility"  # who / what qualifies, prerequisites
    policy = "policy"  # rules, terms, obligations
    tool = "tool"  # a system action or tool to call
    fee = "fee"  # fees, rates, interest, charges
    limit = "limit"  # limits, caps, thresholds, timelines
    escalation = "escalation"  # when to hand off, contact, dispute
    definition = "definition"  # what a term or product is
    troubleshooting = "troubleshooting"  # causes and fixes of a problem
    reference = "reference"  # anything else the page relies on


LINK_TYPES: tuple[str, ...] = tuple(t.value for t in LinkType)

PageKind = Literal["entity", "aspect", "topic"]
#: What a page is: one family's complete article list, one aspect compared across siblings, or other.
PAGE_KINDS: tuple[str, ...] = ("entity", "aspect", "topic")
#: ``[type: article-id]`` inside page text.
#: An article id inside page text (the ``article`` rule's characters; ``Link`` checks the whole rule).
_ARTICLE_ID = f"[{ID_RULES['article'].first}][{ID_RULES['article'].chars}]*"
LINK_RE = re.compile(r"\[(" + "|".join(LINK_TYPES) + r"):\s*(" + _ARTICLE_ID + r")\]")


def check_page_id(value: str) -> str:
    """Return ``value`` if it is a valid page id (``workspace.ids``' ``page`` rule), else raise ``InvalidIdError``."""
    return check_id(value, "page")


def slugify(text: str, max_len: int = 80) -> str:
    """A page id from free text: ``"Gold Rewards Card (2)"`` -> ``"gold-rewards-card-2"``."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    slug = slug[:max_len].rstrip("-")
    return slug or "page"


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _article_id(v: str) -> str:
    if not is_id(v, "article"):
        raise ValueError(f"{v!r} is not a valid article id")
    return v


#: An article id a page cites (``is_id(v, "article")``; anything else is a validation error).
ArticleIdStr = Annotated[str, AfterValidator(_article_id)]


class Link(BaseModel):
    """A typed link from a claim to the article it comes from."""

    model_config = ConfigDict(frozen=True)

    type: LinkType
    article_id: ArticleIdStr

    def render(self) -> str:
        return f"[{self.type.value}: {self.article_id}]"


class Step(BaseModel):
    """One step or claim of the procedure, in the page's own words, with the links it rests on."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1, description="One line of prose (no typed links inside).")
    links: tuple[Link, ...] = ()

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        v = _one_line(LINK_RE.sub("", v))
        if not v:
            raise ValueError("step text is empty")
        return v


#: Separates a source's title from its summary on a ``## Sources`` line (never kept inside either).
_SUMMARY_SEP = " — _"


class SourceRef(BaseModel):
    """A source article merged into the page, with an optional one-line summary of what it covers."""

    model_config = ConfigDict(frozen=True)

    id: ArticleIdStr
    title: str = ""
    summary: str = Field("", description="One line on what the article covers (or its key line).")

    @field_validator("title", "summary")
    @classmethod
    def _title(cls, v: str) -> str:
        return _one_line(v).replace(_SUMMARY_SEP, " — ").strip("_ ") if v else v

    def render(self) -> str:
        """The ``## Sources`` list item: ``- ID — Title — _summary_``."""
        line = f"- {self.id}" + (f" — {self.title}" if self.title else "")
        return line + (f"{_SUMMARY_SEP}{self.summary}_" if self.summary else "")


class Page(BaseModel):
    """One page of the navigation layer. Pages are navigation, never evidence: only articles are quoted."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str = Field(min_length=1)
    kind: PageKind = Field("topic", description="entity (a family's complete list), aspect (compared "
                                                "across sibling entities) or topic.")
    intent: str = Field("", description="What the workflow is for, one paragraph.")
    solves: tuple[str, ...] = ()
    does_not_solve: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    pooled_links: tuple[Link, ...] = Field((), description="Page-level links (pooled-links variant).")
    sources: tuple[SourceRef, ...] = ()
    variant: str = "full"
    builder: str = "extractive"
    model: str | None = None
    built_from: dict[str, str] = Field(default_factory=dict, description="article id -> content hash.")

    @field_validator("id")
    @classmethod
    def _pid(cls, v: str) -> str:
        try:
            return check_page_id(v)
        except InvalidIdError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("title", "intent")
    @classmethod
    def _line(cls, v: str, info: ValidationInfo) -> str:
        # a leading '#' would turn the rendered intent paragraph into a heading
        out = _one_line(LINK_RE.sub("", v)).lstrip("#").strip()
        if info.field_name == "title" and not out:
            raise ValueError(f"title {v!r} has no text once link syntax and leading '#' are removed")
        return out

    @field_validator("solves", "does_not_solve")
    @classmethod
    def _items(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(x for x in (_one_line(LINK_RE.sub("", s)) for s in v) if x)

    # -- the interface retrieval uses -------------------------------------------------------

    def search_text(self) -> str:
        """Intent + solves + does-not-solve + procedure text, newline-joined (what retrieval indexes)."""
        parts = [self.title, self.intent, *self.solves, *self.does_not_solve, *(s.text for s in self.steps)]
        return "\n".join(p for p in parts if p)

    def links(self) -> list[Link]:
        """Every typed link in page order: step links, then page-level links."""
        return [ln for s in self.steps for ln in s.links] + list(self.pooled_links)

    def article_ids(self) -> list[str]:
        """Cited article ids in page order (links first, then sources), de-duplicated."""
        seen: dict[str, None] = {}
        for ln in self.links():
            seen.setdefault(ln.article_id, None)
        for src in self.sources:
            seen.setdefault(src.id, None)
        return list(seen)

    def source_ids(self) -> list[str]:
        return [s.id for s in self.sources]

    def within(self, inside: Collection[str]) -> Page | None:
        """This page as a reader who may read only the articles ``inside`` sees it: a page is derived
        from its articles, so it shows only what it derives from articles inside.

        * every article the page derives from (``article_ids()``) inside: the page, whole;
        * none inside: None (not shown, not listed);
        * some inside: the parts attributable to them alone. A step is attributed to the articles it
          links, so it stays when it links at least one article and every one it links is inside; a
          source entry (id, title, summary) and a page-level link are their article's. The intent, the
          solves and does-not-solve lists and a step with no link were written from the page's sources
          together and cannot be attributed: they are dropped. The id and title, the page's name, stay
          (``corpus.ScopedArticles.page`` hides the page when its name says what only outside articles
          say).

        The one reduction of pages, applied through ``corpus.ScopedArticles.page`` by every surface."""
        ids = self.article_ids()
        keep = set(inside)
        if all(a in keep for a in ids):
            return self
        if not any(a in keep for a in ids):
            return None
        steps = tuple(st for st in self.steps if st.links and all(ln.article_id in keep for ln in st.links))
        reduced = self.model_copy(update={
            "intent": "", "solves": (), "does_not_solve": (), "steps": steps,
            "pooled_links": tuple(ln for ln in self.pooled_links if ln.article_id in keep),
            "sources": tuple(src for src in self.sources if src.id in keep),
            "built_from": {a: h for a, h in self.built_from.items() if a in keep},
        })
        return reduced if reduced.article_ids() else None  # nothing attributable left: not shown


_SECTION_ORDER = ("Intent", "Solves", "Does not solve", "Procedure", "Links", "Sources")


def render_page(page: Page) -> str:
    """The Markdown file text of ``page`` (YAML front matter + fixed sections)."""
    meta = {
        "id": page.id,
        "title": page.title,
        "kind": page.kind,
        "variant": page.variant,
        "builder": page.builder,
        "model": page.model,
        "built_from": dict(sorted(page.built_from.items())),
    }
    out = ["---", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000).rstrip(), "---", ""]
    out += [f"# {page.title}", "", "## Intent", "", page.intent or "_(none)_", ""]
    out += ["## Solves", ""] + ([f"- {s}" for s in page.solves] or ["_(none)_"]) + [""]
    out += ["## Does not solve", ""] + ([f"- {s}" for s in page.does_not_solve] or ["_(none)_"]) + [""]
    steps = [
        f"{i}. {s.text}" + "".join(" " + ln.render() for ln in s.links) for i, s in enumerate(page.steps, 1)
    ]
    out += ["## Procedure", ""] + (steps or ["_(none)_"]) + [""]
    if page.pooled_links:
        out += ["## Links", ""] + [f"- {ln.render()}" for ln in page.pooled_links] + [""]
    srcs = [s.render() for s in page.sources]
    out += ["## Sources", ""] + (srcs or ["_(none)_"]) + [""]
    return "\n".join(out)


_H2 = re.compile(r"^##[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_NUM = re.compile(r"^\d+[.)][ \t]+(.*)$")
_BULLET = re.compile(r"^[-*][ \t]+(.*)$")
_SOURCE = re.compile(r"^`?(" + _ARTICLE_ID + r")`?(?:[ \t]+[—–-][ \t]+(.*))?$")


def _sections(body: str) -> dict[str, list[str]]:
    heads = list(_H2.finditer(body))
    out: dict[str, list[str]] = {}
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        lines = [ln.strip() for ln in body[m.end() : end].splitlines()]
        out[m.group(1).strip().lower()] = [ln for ln in lines if ln and ln != "_(none)_"]
    return out


def _links_in(text: str) -> tuple[Link, ...]:
    return tuple(Link(type=LinkType(t), article_id=a) for t, a in LINK_RE.findall(text))


def parse_page(text: str, *, where: str = "page") -> Page:
    """Parse a page file. Raises ``WorkspaceError`` naming ``where`` when it is not a valid page."""
    try:
        post = frontmatter.loads(text)
    except (yaml.YAMLError, ValueError) as exc:
        raise WorkspaceError(f"{where}: bad front matter ({str(exc).splitlines()[0]})") from None
    meta = dict(post.metadata)
    secs = _sections(post.content)
    unknown = [h for h in secs if h not in {s.lower() for s in _SECTION_ORDER}]
    if unknown:
        raise WorkspaceError(f"{where}: unknown section(s) {', '.join(unknown)} (allowed: {', '.join(_SECTION_ORDER)})")

    def items(name: str, pattern: re.Pattern[str]) -> list[str]:
        out = []
        for ln in secs.get(name, []):
            m = pattern.match(ln)
            if m:
                out.append(m.group(1))
            elif out:  # a wrapped continuation line
                out[-1] += " " + ln
            else:
                raise WorkspaceError(f"{where}: section {name!r}: expected a list item, got {ln[:60]!r}")
        return out

    try:
        steps = [Step(text=LINK_RE.sub("", s), links=_links_in(s)) for s in items("procedure", _NUM)]
        pooled = [ln for s in items("links", _BULLET) for ln in _links_in(s)]
        sources = []
        for s in items("sources", _BULLET):
            s, summary = s.strip(), ""
            if s.endswith("_") and _SUMMARY_SEP in s:
                s, summary = s.rsplit(_SUMMARY_SEP, 1)
                summary = summary[:-1]
            m = _SOURCE.match(s)
            if not m:
                raise WorkspaceError(f"{where}: bad source line {s[:60]!r} (want `- ARTICLE-ID — Title`)")
            sources.append(SourceRef(id=m.group(1), title=m.group(2) or "", summary=summary))
        built_from = meta.get("built_from") or {}
        if not isinstance(built_from, dict):
            raise WorkspaceError(f"{where}: built_from must be a mapping of article id to hash")
        return Page(
            id=str(meta.get("id", "")),
            title=str(meta.get("title", "")),
            kind=meta.get("kind") or "topic",
            intent=" ".join(secs.get("intent", [])),
            solves=tuple(items("solves", _BULLET)),
            does_not_solve=tuple(items("does not solve", _BULLET)),
            steps=tuple(steps),
            pooled_links=tuple(pooled),
            sources=tuple(sources),
            variant=str(meta.get("variant", "full")),
            builder=str(meta.get("builder", "extractive")),
            model=meta.get("model"),
            built_from={str(k): str(v) for k, v in built_from.items()},
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "page"
        raise WorkspaceError(f"{where}: {loc}: {err['msg']}") from None
