"""Hybrid retrieval over a built index: BM25 + dense, fused by reciprocal rank fusion.

Backends: ``direct`` ranks articles; ``wiki`` ranks navigation pages and returns the articles the
ranked pages cite, de-duplicated, each with the pages that led to it. How those articles are ordered
is ``search.wiki_order``:

* ``"fused"`` (default): reciprocal rank fusion of two ranks per reached article, with the same
  ``rrf_k``: the rank of the best page citing it (weight 1), and its own rank among the reached
  articles under the same mode (BM25 / dense / hybrid scores of the ``direct`` index, which the wiki
  index build keeps up to date; weight ``wiki_article_weight``, 1.5). Ties go to the better page, then
  the better article rank, then citation order.
* ``"page"``: page rank order, each page's articles in the order the page cites them (the paper's
  plain dereference). One page that ranks high but is wrong then fills the whole top k.

Measured on the 46 τ²-banking dev tasks over the extractive layer (hybrid, dense query pooled, R@10 /
R@50 / MRR): page order 0.179 / 0.557 / 0.335; each page's articles sorted by their own relevance
0.182 / 0.546 / 0.472; at most 2 articles per page first, then the rest 0.313 / 0.532 / 0.508;
round-robin over the top 5 pages 0.313 / 0.546 / 0.512; fused 0.320 / 0.672 / 0.571 (``direct``:
0.334 / 0.634 / 0.715). With the select dense query (160 tokens), fused barely depends on the
extractive layer's ``max_group`` (3: 0.311 / 0.669; 10: 0.311 / 0.672; R@10 / R@50) while page
order does (3: 0.243 / 0.580; 10: 0.202 / 0.544).

Long queries (a whole case, hundreds of words) are handled so that no part silently dominates:

* BM25 counts a term as often as the query repeats it (a case that says "card" five times is about
  cards) and, past ``max_query_terms`` distinct terms, keeps only those with the highest inverse
  document frequency.
* Dense, ``dense_query="select"`` (default): the query's sentences are ranked by the summed inverse
  document frequency (from this index's BM25 vocabulary) of their distinct terms; the best are kept,
  in their original order, while they fit in ``max_query_tokens`` model tokens, and embedded as one
  sequence. A case's telling sentences ("my card was declined abroad") are kept wherever they are,
  its small talk dropped, and the embedder runs once on at most ``max_query_tokens`` tokens.
  ``"pool"``: the query is cut into windows of ``passage_words`` words, each window embedded, and the
  mean of the unit vectors (re-normalised) is the query vector; ``"truncate"``: only the first
  ``max_query_tokens`` model tokens are embedded. Short queries are embedded whole by all three.

  Measured on the 46 τ²-banking dev tasks (median 502 words; hybrid / direct, R@10 / R@20 / R@50,
  warm p50 on the 2-core machine at load ~1.5, benchmarks/results/retrieval.md): pool 0.334 / 0.473
  / 0.634 at 98 ms; truncate 256 tokens 0.294 / 0.419 / 0.622 at 30 ms; truncate 128 0.255 / 0.388
  / 0.622 at 15 ms; select 96 / 128 / 160 / 192 tokens all 0.30–0.33 / 0.43–0.44 / 0.61–0.64
  (within noise of each other on 46 tasks) at 14 / 17 / 19 / 22 ms. Nearly all of a long query's
  time is the transformer (the int8 file's weights are dequantised at load, so it runs fp32 MatMuls,
  ~0.1 ms per token on an idle 2-core machine, ~0.16 under load), so the token budget sets the
  latency. Those figures are for hybrid / direct. On the default backend (hybrid / wiki) the budget
  matters more for the first hit (issue 24, R@20 / R@50 / MRR): select 128 0.440 / 0.662 / 0.555, 160
  0.450 / 0.666 / 0.528, 176 0.460 / 0.661 / 0.641, 192 0.464 / 0.670 / 0.612, 208 0.454 / 0.658 /
  0.628, 224 0.477 / 0.670 / 0.584, 256 0.506 / 0.705 / 0.599; pool 0.494 / 0.656 / 0.663 at about
  ten times the query time. 192 is the default: the middle of the 176–208 plateau, about 1.5× the
  embedding time of 128.

  Query focusing was measured too, and is not used: keeping only the scenario's request sentences
  (``skillrag.text.request_sentences``: no role-play directions) lowered hybrid / wiki (select 128)
  from 0.440 / 0.662 / 0.555 to 0.383 / 0.613 / 0.466; fused by RRF with the whole query 0.423 / 0.660
  / 0.505; for the dense query only 0.417 / 0.662 / 0.493, for BM25 only 0.401 / 0.660 / 0.481; the
  product names (``capitalised_names``) as a second sub-query 0.310 / 0.555 / 0.352; one sub-query per
  paragraph, fused, 0.406 / 0.607 / 0.536 at six times the time. The directions a scenario gives ("if
  you are recommended a particular credit card…") name the products too.

Every search first checks that the index still matches what it was built from (article content
hashes for ``direct``, the layer fingerprint for ``wiki``, and the embedder id and parameters) and
raises ``IndexStateError`` otherwise; it never answers from a stale index.

Where the index is stored and its two rankings are computed is the engine's (``search.engine``:
``embedded`` or ``milvus``, ``skillrag.search.engines``); everything above (analysis, query vector,
depth, fusion, aggregation, filters, freshness) is this module's and the same on every engine.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import threading
from typing import Any, cast

import numpy as np

from skillrag.corpus import ArticleStore, ScopedArticles
from skillrag.errors import EmptyInputError, IndexStateError, SkillragError, UserError
from skillrag.search._items import (
    PageSource,
    WikiPageSource,
    common_facets,
    corpus_facets,
    no_layer_error,
    preview_of,
)
from skillrag.search._passages import ScoredText, analyse, best_passage
from skillrag.search._ranked import Ranked, RetrieverRanking, relative_scores
from skillrag.search._types import Hit, PageArticle, PageHit, PageView, SearchFilters
from skillrag.search.embedders import Embedder
from skillrag.search.engines import ScoringIndex, get_engine
from skillrag.search.fusion import reciprocal_rank_fusion
from skillrag.search.index import check_manifest, embedder_for, index_params, index_versions
from skillrag.text import BM25, Analyzer
from skillrag.workspace import Workspace
from skillrag.workspace.schema import open_connection

__all__ = ["BACKENDS", "MAX_HIT_PAGES", "MODES", "Retriever", "open_retriever", "preview_of", "read_page"]

BACKENDS = ("direct", "wiki")
MODES = ("hybrid", "bm25", "dense")
#: Ranks taken from each retriever into reciprocal rank fusion (deeper ranks add < 1/260 each). On the tau2
#: banking dev tasks (hybrid / wiki, select 192, R@20 / R@50 / MRR): 50 0.433 / 0.576 / 0.622, 100 0.468 /
#: 0.647 / 0.636, 200 0.468 / 0.667 / 0.636, 400 0.466 / 0.657 / 0.636 (BM25 weight 1.5 in that sweep).
FUSION_DEPTH = 200
#: How the ``select`` policy cuts a long query into sentences: a plain rule, not ``skillrag.text.sentences``.
#: On the tau2 dev queries the text layer's sentences gave higher recall on every arm (hybrid/direct R@10
#: 0.304 -> 0.337, hybrid/wiki 0.308 -> 0.365) but a lower hybrid/direct MRR (0.623 -> 0.606), so the
#: switch is left to a decision on the figures (issue 23), not made silently here.
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
#: Shorter sentences ("Be polite.") are not kept by the ``select`` policy unless nothing else is left.
_MIN_SENTENCE_WORDS = 3
#: Article versions whose passages a retriever keeps analysed (previews of hits seen before are cheap).
PASSAGE_CACHE = 4096
#: Navigation pages named on one hit (``Hit.page_ids``): the best-ranked pages citing the article. An
#: article of a big family sits on its entity page and many aspect pages; listing all of them (up to 11
#: on τ²) on every hit was noise. Every page lists all of its articles (``search_pages``, ``read_page``).
MAX_HIT_PAGES = 3


class Retriever:
    """Searches one built index. Build with ``open_retriever``; safe to reuse across queries."""

    def __init__(self, ws: Workspace, backend: str, mode: str, embedder: Embedder,
                 pages: PageSource | None = None) -> None:
        self.ws = ws
        self.backend = backend
        self.mode = mode
        self.embedder = embedder
        #: a snapshot of ``search`` settings taken at open: a config changed later changes nothing here
        self.settings = ws.config.search.model_copy(deep=True)
        self._pages = pages or WikiPageSource()
        self._store = ArticleStore(ws)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._fresh_at: int | None = None
        self.engine = get_engine(ws)
        index = self.engine.open(backend)
        if index is None:
            if backend == "wiki" and self._pages.layer_fingerprint(ws) is None:
                raise no_layer_error(ws)
            raise IndexStateError(f"no {backend} search index in {ws.root}; run `skillrag index --backend {backend}`")
        self.index = index
        #: items each ranking asks the engine for: None = every item's score (an in-memory engine,
        #: a ``ScoringIndex``; the retriever selects as deep as it reads), else FUSION_DEPTH
        self.depth: int | None = None if self.engine.exhaustive else FUSION_DEPTH
        self.manifest = index.manifest
        self._check_build(self.manifest)
        self.items: list[dict[str, Any]] = index.items
        #: BM25 vocabulary (term -> id) of the index; query terms outside it are dropped
        self.vocab: dict[str, int] = index.vocab
        self.analyzer = Analyzer(self.settings.stopwords, self.settings.stemmer)
        #: the index's BM25 parameters (its manifest's, which ``_check_build`` found equal to the settings')
        self.bm25 = BM25.of(self.settings)
        self.idf = self.bm25.idf(index.df, len(self.items))
        self.index_of = {it["id"]: i for i, it in enumerate(self.items)}
        self._articles: Retriever | None = None
        self._qvec_memo: tuple[str, np.ndarray] | None = None
        self._inv_vocab: dict[int, str] | None = None
        self._passage_cache: dict[str, ScoredText] = {}
        self._corpus_facets: dict[str, tuple[str, str]] | None = None  # wiki_order page only (_facets_of)
        if backend == "wiki" and self.settings.wiki_order == "fused":
            try:
                self._articles = Retriever(ws, "direct", mode, embedder)
            except IndexStateError as exc:
                raise IndexStateError(f"the wiki backend ranks the articles a page cites with the direct index: "
                                      f"{exc}") from None

    # -- freshness ---------------------------------------------------------------------------------
    def _check_build(self, manifest: dict[str, Any]) -> None:
        check_manifest(manifest, backend=self.backend, embedder_id=self.embedder.id,
                       params=index_params(self.settings), versions=index_versions(self.engine, self.settings))

    def check_fresh(self) -> None:
        """Raise ``IndexStateError`` if the corpus (``direct``) or the layer (``wiki``) changed since the build,
        or the stored index changed since it was opened."""
        self.index.check_current()
        if self.backend == "wiki":
            fp = self._pages.layer_fingerprint(self.ws)
            if fp is None:
                raise no_layer_error(self.ws)
            if fp != self.manifest.get("layer_fingerprint"):
                raise IndexStateError("the navigation layer changed since the wiki index was built; "
                                      "run `skillrag index --backend wiki`")
            if self._articles is not None:
                self._articles.check_fresh()
            return
        version = self._data_version()
        if version is not None and version == self._fresh_at:
            return  # no commit to the store since the last check that passed
        now = self._store.hashes()
        built = self.manifest.get("content_hashes", {})
        if now != built:
            added = len(set(now) - set(built))
            removed = len(set(built) - set(now))
            changed = sum(1 for i in now if i in built and built[i] != now[i])
            raise IndexStateError(
                f"the search index is stale ({changed} changed, {added} added, {removed} removed articles "
                "since it was built); run `skillrag index`"
            )
        self._fresh_at = version

    def _data_version(self) -> int | None:
        """SQLite ``PRAGMA data_version`` of a connection kept open: it changes whenever another
        connection commits to the store, so an unchanged value means the articles are unchanged."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = open_connection(self.ws.store_path, check_same_thread=False)
                return int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error:
                return None

    def close(self) -> None:
        """Close the store connection kept for freshness checks (reopened on demand)."""
        if self._articles is not None:
            self._articles.close()
        self.index.close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- scoring -----------------------------------------------------------------------------------
    def query_terms(self, query: str) -> list[int]:
        """BM25 term ids of ``query`` in the index vocabulary, repeats kept (query term frequency);
        past ``max_query_terms`` distinct terms, only the highest-idf ones are kept (see module doc)."""
        vocab = self.vocab
        ids = [vocab[t] for t in self.analyzer.terms(query) if t in vocab]
        distinct = list(dict.fromkeys(ids))
        cap = self.settings.max_query_terms
        if len(distinct) > cap:
            keep = set(sorted(distinct, key=lambda t: -self.idf[t])[:cap])
            ids = [t for t in ids if t in keep]
        return ids

    def bm25_scores(self, query: str) -> np.ndarray:
        """``(n_items,)`` BM25 scores (Robertson & Zaragoza 2009, Lucene variant); 0 where no term matches."""
        out = np.zeros(len(self.items), dtype=np.float32)
        idx, sc = self.index.lexical(self.query_terms(query), len(self.items), None, None)
        out[idx] = sc
        return out

    def select_sentences(self, query: str, budget: int) -> str:
        """The query cut to ``budget`` model tokens by the ``select`` policy (module doc): the sentences
        with the highest summed idf of their distinct terms, in their original order, joined by spaces.
        Token counts come from the embedder's ``token_counts`` when it has one, else words count."""
        count = getattr(self.embedder, "token_counts", None)
        sizes = count if callable(count) else (lambda ts: [len(t.split()) for t in ts])
        found = [x.strip() for x in _SENTENCE.split(query) if x.strip()]
        sents = [x for x in found if len(x.split()) >= _MIN_SENTENCE_WORDS] or found
        lengths = sizes(sents) if sents else []
        if not sents or sum(lengths) <= budget:
            return query
        vocab = self.vocab
        weight = [sum(self.idf[vocab[t]] for t in set(self.analyzer.terms(x)) if t in vocab) for x in sents]
        keep: list[int] = []
        used = 0
        for i in sorted(range(len(sents)), key=lambda i: -weight[i]):
            n = lengths[i]
            if used + n <= budget or not keep:
                keep.append(i)
                used += n
        return " ".join(sents[i] for i in sorted(keep))

    def query_vector(self, query: str) -> np.ndarray:
        """``(dim,)`` float32 unit query vector under the long-query policy (see module doc)."""
        s = self.settings
        trunc = getattr(self.embedder, "truncate", None)
        if s.dense_query == "select":
            text = self.select_sentences(query, s.max_query_tokens)
            v = self.embedder.embed([trunc(text, s.max_query_tokens) if callable(trunc) else text])[0]
        elif s.dense_query == "pool":
            words = query.split()
            parts = [" ".join(words[i : i + s.passage_words]) for i in range(0, len(words), s.passage_words)]
            vecs = self.embedder.embed(parts or [query])
            v = vecs.mean(axis=0)
        else:
            text = trunc(query, s.max_query_tokens) if callable(trunc) else query
            v = self.embedder.embed([text])[0]
        return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)

    def dense_scores(self, query: str, qvec: np.ndarray | None = None) -> np.ndarray:
        """``(n_items,)`` cosine of the query with each item's best passage (``qvec``: the query
        vector if already computed with this embedder)."""
        out = np.zeros(len(self.items), dtype=np.float32)
        idx, sc = self.index.dense(self.query_vector(query) if qvec is None else qvec, len(self.items), None, None)
        out[idx] = sc
        return out

    def _rank(self, query: str, mask: np.ndarray | None = None, qvec: np.ndarray | None = None,
              filters: SearchFilters | None = None) -> Ranked:
        """The matching items under this retriever's mode, best first, with each item's BM25 and dense
        ranks and its normalised score, computed as deep as they are read (``Ranked``). ``mask``:
        ``(n_items,)`` bool, items allowed (``filters``: the same restriction, passed on so an engine
        can apply it at its source); ``qvec``: a precomputed query vector.

        The embedded engine scores every item: ranks and the dense median are exact over all of them,
        and only the items read are selected (``argpartition``, no full sort). An engine on a server
        ranks the best ``FUSION_DEPTH`` of each (``self.depth``): items past that have no rank there,
        and the dense median is taken over the ranked ones.
        """
        n = len(self.items)
        s = self.settings
        hybrid = self.mode == "hybrid"
        first = FUSION_DEPTH if hybrid else None
        bm25 = dense = None
        scoring = cast(ScoringIndex, self.index) if self.depth is None else None
        if self.mode in ("bm25", "hybrid"):
            terms = self.query_terms(query)
            if scoring is not None:
                b = scoring.lexical_scores(terms)
                keep = b > 0 if mask is None else mask & (b > 0)
                bm25 = RetrieverRanking.scored(b, np.flatnonzero(keep), 0.0, first)
            else:
                bm25 = RetrieverRanking.cut(n, self.index.lexical(terms, self.depth or n, mask, filters), 0.0)
        if self.mode in ("dense", "hybrid"):
            q = self.query_vector(query) if qvec is None else qvec
            if scoring is not None:  # unranked items count below any cosine a ranked one has
                dense = RetrieverRanking.scored(scoring.dense_scores(q), None if mask is None else np.flatnonzero(mask),
                                                -1.0, first)
            else:
                dense = RetrieverRanking.cut(n, self.index.dense(q, self.depth or n, mask, filters), -1.0)
        return Ranked(bm25, dense, weights=(s.bm25_weight, s.dense_weight), rrf_k=s.rrf_k,
                      fusion_depth=FUSION_DEPTH)

    def rank_items(self, query: str, mask: np.ndarray | None = None, qvec: np.ndarray | None = None,
                   *, depth: int | None = None) -> list[tuple[int, float]]:
        """The best ``depth`` matching items (None: every one) as ``(item index, score)``, best first,
        under this retriever's mode.

        ``mask``: ``(n_items,)`` bool, items allowed; ``qvec``: a precomputed query vector."""
        return self._rank(query, mask, qvec).head(depth)

    # -- the public calls --------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, filters: SearchFilters | None = None) -> list[Hit]:
        """The top ``k`` articles for ``query``, best first (fewer if fewer match), each with its
        relevance, BM25 and dense ranks and best-matching passage (``Hit``).

        Raises ``EmptyInputError`` for a blank query, ``UserError`` for ``k`` < 1 and
        ``IndexStateError`` when the index is stale.
        """
        if not isinstance(query, str) or not query.strip():
            raise EmptyInputError("empty query: give some words to search for")
        if k < 1:
            raise UserError(f"k must be at least 1, got {k}")
        self.check_fresh()
        filters = filters if filters is not None and not filters.is_empty() else None
        if self.backend == "direct":
            return self._search_direct(query, k, filters)
        return self._search_wiki(query, k, filters)

    def search_pages(self, query: str, k: int = 3, filters: SearchFilters | None = None, *,
                     scope: ScopedArticles | None = None) -> list[PageHit]:
        """The top ``k`` navigation pages for ``query`` (``wiki`` backend; ``[]`` for ``direct``), each
        with its kind, title, intent, relevance and the articles it cites that pass ``filters``
        (a page citing none of them is skipped). ``scope``: each page as ``scope.page`` lets that
        reader see it (hidden pages skipped, others reduced to their in-scope parts). Same errors as
        ``search``."""
        if not isinstance(query, str) or not query.strip():
            raise EmptyInputError("empty query: give some words to search for")
        if k < 1:
            raise UserError(f"k must be at least 1, got {k}")
        if self.backend != "wiki":
            return []
        self.check_fresh()
        filters = filters if filters is not None and not filters.is_empty() else None
        qvec = self._query_vector_once(query)
        ranked = self._rank(query, qvec=qvec)
        match = self._article_ranking(query, qvec)
        found: list[tuple[float, PageHit]] = []
        for i, score in ranked:
            item = self.items[i]
            try:
                page = self._pages.load_page(self.ws, item["id"])
            except SkillragError:
                continue  # a page removed since the build: check_fresh catches it on the next call
            if scope is not None and (page := scope.page(page)) is None:
                continue  # derived from articles outside the reader's scope
            listed, arts = self._page_articles(page, filters, match)
            if not arts:
                continue
            category, kind = common_facets(list(self._facets_of([a.id for a in listed]).values()))
            found.append((score, PageHit(
                page_id=item["id"], kind=str(getattr(page, "kind", "topic") or "topic"), title=item["title"],
                intent=str(getattr(page, "intent", "") or ""), relevance=1.0, articles=tuple(arts),
                listed=len(listed), cut_by=filters.line() if filters is not None and len(arts) < len(listed) else "",
                category=category, customer_type=kind)))
            if len(found) == k:
                break
        rel = relative_scores([sc for sc, _ in found], self._score_floor(fused=False))
        return [dataclasses.replace(h, relevance=r) for (_, h), r in zip(found, rel, strict=True)]

    def read_page(self, page_id: str, *, scope: ScopedArticles | None = None) -> PageView:
        """One navigation page whole (``PageView``), as ``scope`` (if given) may see it. Raises
        ``InvalidIdError`` for a malformed id and ``UserError`` when there is no such page or ``scope``
        may not see it."""
        return read_page(self.ws, page_id, pages=self._pages, store=self._store, scope=scope)

    def load_page(self, page_id: str) -> Any:
        """The navigation page ``page_id`` as stored (a ``skillrag.wiki.Page``), from this retriever's page
        source. Raises ``InvalidIdError`` / ``UserError`` as ``read_page``; pages are navigation, never
        evidence, and a reader acting for a skill sees one through ``ScopedArticles.page``."""
        return self._pages.load_page(self.ws, page_id)

    def _page_articles(self, page: Any, filters: SearchFilters | None,
                       match: Any) -> tuple[list[PageArticle], list[PageArticle]]:
        """``(listed, shown)``: the articles ``page`` cites that the corpus still holds, in page order, and
        those of them that pass ``filters``, best-matching first (``match``: the direct index's ranking of
        the query, ``_article_ranking``; by ``norm``, ties in the page's order; None: the page's order)."""
        ids = list(page.article_ids())
        summaries = {str(getattr(s, "id", "")): str(getattr(s, "summary", "") or "")
                     for s in getattr(page, "sources", ()) or ()}
        arts = self._articles if self._articles is not None else None
        listed: list[PageArticle] = []
        shown: list[PageArticle] = []
        if arts is not None:
            for a in ids:
                j = arts.index_of.get(a)
                if j is None:
                    continue
                it = arts.items[j]
                entry = PageArticle(a, it["title"], summaries.get(a, ""))
                listed.append(entry)
                if filters is None or filters.accepts_item(it):
                    shown.append(entry)
        else:
            found = self._store.get_many(ids)
            facets = self._facets_of(ids) if filters is not None else {}
            for a in ids:
                art = found.get(a)
                if art is None:
                    continue
                entry = PageArticle(a, art.title, summaries.get(a, ""))
                listed.append(entry)
                cat, kind = facets.get(a, ("", ""))
                if filters is None or filters.accepts(art.source_tag, art.source_path, art.title, art.id,
                                                      category=cat, customer_type=kind):
                    shown.append(entry)
        if match is not None and arts is not None and len(shown) > 1:
            value = match.norm(np.array([arts.index_of[e.id] for e in shown], dtype=np.int64)).tolist()
            at = {e.id: n for n, e in enumerate(shown)}
            shown.sort(key=lambda e: (-value[at[e.id]], at[e.id]))
        return listed, shown

    def _article_ranking(self, query: str, qvec: np.ndarray | None) -> Ranked | None:
        """The direct index's ranking of ``query`` under this mode, whose ``norm`` (BM25 over the best and
        the cosine rescaled from the median to the best, 0–1) orders a page's article list best-matching
        first; None without the direct index (``wiki_order: page``: the page's own order)."""
        return self._articles._rank(query, qvec=qvec) if self._articles is not None else None

    def _facets_of(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """The facets (category, customer type) of the articles ``ids``, as the direct index recorded them
        (``skillrag.wiki.families.article_facets`` at build time); without a direct index (``wiki_order:
        page``) computed from the corpus by the same rule, once per retriever."""
        src = self if self.backend == "direct" else self._articles
        if src is not None:
            out = {}
            for a in ids:
                j = src.index_of.get(a)
                if j is not None:
                    it = src.items[j]
                    out[a] = (str(it.get("category", "") or ""), str(it.get("customer_type", "") or ""))
            return out
        if self._corpus_facets is None:
            self._corpus_facets = corpus_facets(self._store.list(split_documents=False))
        return {a: self._corpus_facets[a] for a in ids if a in self._corpus_facets}

    def _score_floor(self, *, fused: bool) -> float:
        """The least score a candidate can have, the zero of ``relevance``: a cosine's −1 (dense mode), else
        0 (reciprocal rank fusion, BM25). ``fused``: a wiki hit's fused page/article score (0)."""
        return -1.0 if self.mode == "dense" and not fused else 0.0

    # -- hits --------------------------------------------------------------------------------------
    def _query_vector_once(self, query: str) -> np.ndarray | None:
        """The query vector, memoised for the last query (``search`` and ``search_pages`` of one
        ``retrieve`` call embed it once); None in ``bm25`` mode."""
        if self.mode == "bm25":
            return None
        memo = self._qvec_memo
        if memo is not None and memo[0] == query:
            return memo[1]
        v = self.query_vector(query)
        self._qvec_memo = (query, v)
        return v

    def _analysed(self, content_hash: str, body: str) -> ScoredText:
        """The article's passages and term counts, kept for the last ``PASSAGE_CACHE`` article versions."""
        cache = self._passage_cache
        got = cache.get(content_hash)
        if got is None:
            got = analyse(body, self.analyzer.terms)
            with self._lock:
                cache[content_hash] = got
                while len(cache) > PASSAGE_CACHE:
                    cache.pop(next(iter(cache)))
        return got

    def _query_weights(self, query: str) -> dict[str, float]:
        """The query's distinct BM25 terms with their idf in this index (for passage previews)."""
        inv = self._inv_vocab
        if inv is None:
            inv = self._inv_vocab = {v: t for t, v in self.vocab.items()}
        return {inv[t]: float(self.idf[t]) for t in dict.fromkeys(self.query_terms(query))}

    def _hits(self, chosen: list[tuple[str, float, int, int, tuple[str, ...]]], query: str, *,
              fused: bool = False) -> list[Hit]:
        """Hits for ``(article id, ordering score, bm25 rank, dense rank, page ids)``, best first: relevance
        from the ordering scores (``relative_scores``), titles from the store, facets from the index, and
        the best-matching passage as the preview. ``fused``: the scores are the wiki's fused ones."""
        if not chosen:
            return []
        arts = self._store.get_many([c[0] for c in chosen])
        kept = [c for c in chosen if c[0] in arts]  # one removed since the build (check_fresh passed): skipped
        facets = self._facets_of([c[0] for c in kept])
        weights = self._query_weights(query)
        rel = relative_scores([c[1] for c in kept], self._score_floor(fused=fused))
        out: list[Hit] = []
        for (aid, score, br, dr, pages), relevance in zip(kept, rel, strict=True):
            art = arts[aid]
            preview, section = best_passage(art.body, art.sections, weights, self.analyzer.terms,
                                            analysed=self._analysed(art.content_hash, art.body), bm25=self.bm25)
            cat, kind = facets.get(aid, ("", ""))
            out.append(Hit(article_id=aid, score=float(score), title=art.title, preview=preview,
                           page_ids=pages[:MAX_HIT_PAGES], relevance=relevance, bm25_rank=br or None,
                           dense_rank=dr or None, section=section, category=cat, customer_type=kind))
        return out

    def _search_direct(self, query: str, k: int, filters: SearchFilters | None) -> list[Hit]:
        mask = None
        if filters is not None:
            mask = np.array([filters.accepts_item(it) for it in self.items], dtype=bool)
        r = self._rank(query, mask, self._query_vector_once(query), filters)
        head = r.head(k)
        idx = np.array([i for i, _ in head], dtype=np.int64)
        bm, de = r.ranks(idx)
        chosen = [(self.items[i]["id"], sc, int(bm[j]), int(de[j]), ()) for j, (i, sc) in enumerate(head)]
        return self._hits(chosen, query)

    def _search_wiki(self, query: str, k: int, filters: SearchFilters | None) -> list[Hit]:
        if self._articles is not None:
            return self._search_wiki_fused(query, k, filters, self._articles)
        r = self._rank(query, qvec=self._query_vector_once(query))
        ranked = list(r)  # every ranked page: each hit lists all the pages that lead to it
        order: list[str] = []
        first: dict[str, float] = {}
        led_by: dict[str, list[str]] = {}
        for i, score in ranked:
            page = self.items[i]
            for a in page["cites"]:
                if a not in led_by:
                    led_by[a] = []
                    order.append(a)
                    first[a] = score
                led_by[a].append(page["id"])
        chosen: list[tuple[str, float, int, int, tuple[str, ...]]] = []
        step = max(4 * k, 50)
        for start in range(0, len(order), step):
            chunk = order[start : start + step]
            arts = self._store.get_many(chunk)
            facets = self._facets_of(chunk) if filters is not None else {}
            for a in chunk:
                art = arts.get(a)
                cat, kind = facets.get(a, ("", ""))
                if art is None or (filters is not None and not filters.accepts(
                        art.source_tag, art.source_path, art.title, art.id, category=cat, customer_type=kind)):
                    continue
                chosen.append((a, first[a], 0, 0, tuple(led_by[a])))
                if len(chosen) == k:
                    return self._hits(chosen, query)
        return self._hits(chosen, query)

    def _search_wiki_fused(self, query: str, k: int, filters: SearchFilters | None, arts: Retriever) -> list[Hit]:
        """``wiki_order="fused"`` (module doc): RRF of the best citing page's rank and the article's
        own rank among the articles the ranked pages reach; its BM25 and dense ranks are its own among
        the reached articles."""
        return self._hits(self._fused_order(query, k, filters, arts), query, fused=True)

    def _fused_order(self, query: str, k: int, filters: SearchFilters | None,
                     arts: Retriever) -> list[tuple[str, float, int, int, tuple[str, ...]]]:
        """The top ``k`` of the fused wiki order as ``_hits`` takes them (the ranking alone)."""
        qvec = self._query_vector_once(query)
        pages = self._rank(query, qvec=qvec)
        ranked = [i for i, _ in pages]  # every ranked page (the pages lead to the candidate articles)
        page_rank: dict[str, int] = {}
        led_by: dict[str, list[str]] = {}
        for r, i in enumerate(ranked):
            page = self.items[i]
            for a in page["cites"]:
                if a not in led_by:
                    led_by[a] = []
                    page_rank[a] = r
                led_by[a].append(page["id"])
        mask = np.zeros(len(arts.items), dtype=bool)
        for a in led_by:
            j = arts.index_of.get(a)  # a cited id missing from the corpus is skipped
            if j is not None:
                mask[j] = filters is None or filters.accepts_item(arts.items[j])
        own = arts._rank(query, mask, qvec=qvec, filters=filters)
        art_rank = {arts.items[j]["id"]: r for r, (j, _) in enumerate(own)}
        unranked = len(arts.items)  # not matched by the article ranking (e.g. no BM25 term): no share
        cands = [arts.items[j]["id"] for j in np.flatnonzero(mask)]
        fused = dict(reciprocal_rank_fusion(
            [{a: page_rank[a] for a in cands if page_rank[a] < FUSION_DEPTH},
             {a: art_rank[a] for a in cands if a in art_rank and art_rank[a] < FUSION_DEPTH}], k=self.settings.rrf_k,
            weights=[1.0, self.settings.wiki_article_weight]))
        scores = {a: fused.get(a, 0.0) for a in cands}
        pos = {a: n for n, a in enumerate(led_by)}  # last tie-breaker: the order the pages cite them
        best = sorted(scores, key=lambda a: (-scores[a], page_rank[a], art_rank.get(a, unranked), pos[a]))[:k]
        idx = np.array([arts.index_of[a] for a in best], dtype=np.int64)
        bm, de = own.ranks(idx)
        return [(a, scores[a], int(bm[n]), int(de[n]), tuple(led_by[a])) for n, a in enumerate(best)]


def read_page(ws: Workspace, page_id: str, *, pages: PageSource | None = None,
              store: ArticleStore | None = None, scope: ScopedArticles | None = None) -> PageView:
    """One page of the workspace's navigation layer (``pages``: the page source, default the
    ``skillrag.wiki`` layer), with the titles of the articles it cites (those still in the corpus).
    ``scope``: the page as that reader may see it (``ScopedArticles.page``: whole, reduced to its
    in-scope parts, or refused).

    Raises ``InvalidIdError`` for a malformed page id and ``UserError`` when the layer has no such page
    or ``scope`` may not see it.
    """
    src = pages or WikiPageSource()
    page = src.load_page(ws, page_id)
    if scope is not None and (page := scope.page(page)) is None:
        raise UserError(f"navigation page {page_id!r} is outside this skill's allowed sources (it is derived "
                        "from articles the skill may not read)")
    ids = list(page.article_ids())
    found = (store or ArticleStore(ws)).get_many(ids)
    summaries = {str(getattr(s, "id", "")): str(getattr(s, "summary", "") or "")
                 for s in getattr(page, "sources", ()) or ()}
    steps = tuple(
        (str(st.text), tuple((str(getattr(ln.type, "value", ln.type)), str(ln.article_id)) for ln in st.links))
        for st in getattr(page, "steps", ()) or ()
    )
    return PageView(
        page_id=str(page.id), kind=str(getattr(page, "kind", "topic") or "topic"), title=str(page.title),
        intent=str(getattr(page, "intent", "") or ""), solves=tuple(getattr(page, "solves", ()) or ()),
        does_not_solve=tuple(getattr(page, "does_not_solve", ()) or ()), steps=steps,
        articles=tuple(PageArticle(a, found[a].title, summaries.get(a, "")) for a in ids if a in found),
    )


def open_retriever(
    ws: Workspace,
    *,
    backend: str | None = None,
    mode: str | None = None,
    embedder: Embedder | str | None = None,
    pages: PageSource | None = None,
) -> Retriever:
    """A ``Retriever`` over the built index of ``backend`` (default: ``search.backend`` of the config).

    ``mode``: ``hybrid`` | ``bm25`` | ``dense`` (default: ``search.mode``). ``embedder``: an instance,
    a registry name, or None for the configured one; it must be the one the index was built with.
    ``pages`` replaces the ``skillrag.wiki`` page source (tests).
    Raises ``IndexStateError`` when the index is missing, damaged or stale (or there is no navigation
    layer for ``wiki``), ``ConfigError`` for an unknown backend or mode. While another process holds the
    workspace's write lock (an ``index`` build running), the error names it instead of only advising
    ``skillrag index``.
    """
    from skillrag.errors import ConfigError

    s = ws.config.search
    backend = backend or s.backend
    mode = mode or s.mode
    if backend not in BACKENDS:
        raise ConfigError(f"unknown search backend {backend!r} (known: {', '.join(BACKENDS)})")
    if mode not in MODES:
        raise ConfigError(f"unknown search mode {mode!r} (known: {', '.join(MODES)})")
    try:
        return Retriever(ws, backend, mode, embedder_for(ws, embedder), pages=pages)
    except IndexStateError as exc:
        busy = ws.writer()
        if busy is None:
            raise
        # "run `skillrag index`" would only meet the busy lock: say what is happening instead
        raise IndexStateError(f"{exc.args[0] if exc.args else exc}; but {busy} is writing to this workspace "
                              "now: wait for it to finish, then search again") from None
