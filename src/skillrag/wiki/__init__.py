"""The navigation layer: pages over the articles, with intent, typed links and merged sources.

Page kinds: ``entity`` (one product or topic family, every article of it listed), ``aspect`` (one
aspect compared across sibling entities) and ``topic``. Families and aspects are found from the corpus
by code (``families``, ``aspects``). Pages are Markdown files under ``ws.wiki_dir / "pages"``;
``index.md`` (one line per page, kept by code), ``log.md`` (append-only) and ``manifest.json`` (how the
layer was built) sit beside them. Builders: ``extractive`` (deterministic, no model) and ``llm``
(update-or-create, one pass per article, then one call per aspect page). Retrieval reads the layer
through ``load_pages`` and ``layer_fingerprint``.
"""

from skillrag.wiki.aspects import Aspect, AspectMember, find_aspects
from skillrag.wiki.audit import LinkAudit, StructuralAudit, audit_links, audit_structure, fix_links
from skillrag.wiki.build import BuildReport, build_wiki, estimate_build
from skillrag.wiki.extractive import build_extractive
from skillrag.wiki.families import Family, find_families
from skillrag.wiki.layer import Layer, Manifest, layer_fingerprint, load_pages
from skillrag.wiki.llm import LLMBuilder, LLMBuildLimits, PageDraft
from skillrag.wiki.page import PAGE_KINDS, Link, LinkType, Page, SourceRef, Step, parse_page, render_page
from skillrag.wiki.variants import VARIANTS, apply_variant

__all__ = [
    "PAGE_KINDS",
    "VARIANTS",
    "Aspect",
    "AspectMember",
    "BuildReport",
    "Family",
    "LLMBuildLimits",
    "LLMBuilder",
    "Layer",
    "Link",
    "LinkAudit",
    "LinkType",
    "Manifest",
    "Page",
    "PageDraft",
    "SourceRef",
    "Step",
    "StructuralAudit",
    "apply_variant",
    "audit_links",
    "audit_structure",
    "build_extractive",
    "build_wiki",
    "estimate_build",
    "find_aspects",
    "find_families",
    "fix_links",
    "layer_fingerprint",
    "load_pages",
    "parse_page",
    "render_page",
]
