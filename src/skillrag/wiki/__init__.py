"""The navigation layer: topic pages over the articles, with intent, typed links and merged sources.

Pages are Markdown files under ``ws.wiki_dir / "pages"``; ``index.md`` (one line per page, kept by
code), ``log.md`` (append-only) and ``manifest.json`` (how the layer was built) sit beside them.
Builders: ``extractive`` (deterministic, no model) and ``llm`` (update-or-create, one pass per article).
Retrieval reads the layer through ``load_pages`` and ``layer_fingerprint``.
"""

from skillrag.wiki.audit import LinkAudit, StructuralAudit, audit_links, audit_structure, fix_links
from skillrag.wiki.build import BuildReport, build_wiki, estimate_build
from skillrag.wiki.extractive import build_extractive
from skillrag.wiki.layer import Layer, Manifest, layer_fingerprint, load_pages
from skillrag.wiki.llm import LLMBuilder, LLMBuildLimits, PageDraft
from skillrag.wiki.page import Link, LinkType, Page, SourceRef, Step, parse_page, render_page
from skillrag.wiki.variants import VARIANTS, apply_variant

__all__ = [
    "VARIANTS",
    "BuildReport",
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
    "fix_links",
    "layer_fingerprint",
    "load_pages",
    "parse_page",
    "render_page",
]
