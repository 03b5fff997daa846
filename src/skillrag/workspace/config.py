"""Typed workspace configuration, loaded from ``skillrag.yaml``.

Each section belongs to one stage of the pipeline; every field names its unit.
Unknown keys are rejected (``extra="forbid"``) so a typo is an error, not a silent default.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from skillrag.errors import ConfigError

__all__ = [
    "BudgetOverrides",
    "Budgets",
    "CorpusSettings",
    "HarnessSettings",
    "ModelSettings",
    "SearchSettings",
    "ServiceSettings",
    "SkillWebSettings",
    "WikiSettings",
    "WorkspaceConfig",
    "dump_config",
    "load_config",
    "load_yaml_model",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class CorpusSettings(_Section):
    """Content layer: how source files become articles."""

    summary_chars: int = Field(400, ge=50, description="Length of `article --summary`, in characters.")
    split_chars: int = Field(
        10_000, ge=0, description="Documents longer than this are also stored as section-articles split at "
        "their headings, in characters; 0 = never by size."
    )
    split_headings: bool = Field(
        False, description="Split every document that has headings into section-articles, whatever its size "
        "(`skillrag ingest --split-sections` for one ingest)."
    )
    max_article_bytes: int = Field(
        5_000_000, ge=1, description="Largest article (a whole document before splitting) ingest accepts, "
        "in bytes of UTF-8 text; a larger one is rejected."
    )


#: Most results one search call returns, on every surface: ``search.k``, a skill's ``k``, the service's
#: ``k``, ``skillrag search -k``, ``skillrag tool retrieve -k`` and ``SkillTools.retrieve(k=)`` (so MCP
#: and the exported scripts too). One cap, here.
MAX_K = 200


class SearchSettings(_Section):
    """The one retrieval tool: BM25 + dense retrieval fused by reciprocal rank fusion."""

    backend: Literal["wiki", "direct"] = Field(
        "wiki", description="`wiki` (default; needs `skillrag wiki build`): rank navigation pages and return the "
        "articles they cite (with wiki_order fused, ordered with the direct index too); `direct`: rank articles. "
        "Chosen by measurement on tau2 banking (docs/architecture.md, \"Which backend is the default\")."
    )
    mode: Literal["hybrid", "bm25", "dense"] = Field("hybrid", description="Which retrievers to fuse.")
    k: int = Field(10, ge=1, le=MAX_K, description="Results returned per query, in article ids.")
    embedder: str = Field("minilm-int8", description="Embedder backend name (see `skillrag index --help`).")
    embedder_model: str | None = Field(None, description="Model path or name passed to the embedder.")
    embedder_tokenizer: str | None = Field(None, description="tokenizer.json path for a custom ONNX model.")
    embedder_url: str | None = Field(None, description="Base URL of an OpenAI-compatible /embeddings server.")
    rrf_k: int = Field(60, ge=1, description="Reciprocal rank fusion constant k (Cormack et al., 2009). On the "
                       "tau2 banking dev tasks k 20, 40 and 60 were within 0.005 MRR of each other.")
    bm25_weight: float = Field(
        1.0, ge=0, description="Weight of the BM25 ranking in fusion (unitless). On the tau2 banking dev tasks "
        "(hybrid / wiki) 1.25 and 1.5 were within 0.03 of 1.0 on R@20 and MRR, either way; 2.0 lowered both."
    )
    dense_weight: float = Field(1.0, ge=0, description="Weight of the dense ranking in fusion (unitless).")
    stopwords: str | None = Field(
        "en", description="Stop-word list for BM25: `en`, `en_plus`, `content` (`skillrag.text.STOPWORD_LISTS`) or none.")
    stemmer: str | None = Field("english", description="Snowball stemmer language for BM25, or none.")
    max_query_tokens: int = Field(
        192, ge=8, description="Dense query budget for `select` and `truncate`, in model tokens. 192: on the 46 "
        "tau2 banking dev tasks (hybrid / wiki) budgets 176-208 all gave MRR 0.61-0.66 and R@20 0.45-0.47, 128 "
        "and 160 MRR 0.52-0.56, 224-256 a higher R@50 but MRR 0.58-0.61 (benchmarks/results/retrieval.md)."
    )
    dense_query: Literal["select", "truncate", "pool"] = Field(
        "select", description="Long dense queries: highest-idf sentences within max_query_tokens (`select`), "
        "the first max_query_tokens (`truncate`), or the mean of 150-word window vectors (`pool`)."
    )
    max_query_terms: int = Field(
        512, ge=1, description="Distinct BM25 query terms kept (highest idf first); a guard for huge queries."
    )
    bm25_k1: float = Field(1.5, gt=0, description="BM25 term-frequency saturation k1 (unitless).")
    bm25_b: float = Field(0.75, ge=0, le=1, description="BM25 length normalisation b (unitless).")
    title_weight: int = Field(2, ge=1, le=10, description="Times an item's title counts in its BM25 text.")
    passage_words: int = Field(150, ge=16, description="Dense passage window, in words.")
    passage_overlap: int = Field(30, ge=0, description="Overlap of consecutive dense passages, in words.")
    wiki_order: Literal["fused", "page"] = Field(
        "fused", description="wiki backend: fuse page rank with each article's own rank (RRF), or page order."
    )
    wiki_article_weight: float = Field(
        1.5, ge=0, description="wiki backend, `wiki_order` fused: weight of an article's own rank in the fusion, "
        "the best citing page's rank weighing 1 (unitless). 1.5: on the tau2 banking dev tasks, with budgets "
        "176-208 tokens, MRR 0.645 on average against 0.627 at 1.0, R@20 0.453 against 0.459; 2-3 raise MRR "
        "further (0.64-0.67) at a lower R@20 (0.43-0.46)."
    )
    embed_batch: int = Field(
        32, ge=1, le=4096, description="Passages per embedding call during a build, each batch stored at once "
        "(resume point); batches are formed from passages of similar token length."
    )
    embed_threads: int | None = Field(
        None, ge=1, le=256, description="Embedding threads: onnxruntime intra-op threads (onnx, minilm-int8), "
        "or requests in flight (openai); none = the CPUs available (onnx) or 1 (openai)."
    )
    engine: Literal["embedded", "milvus"] = Field(
        "embedded", description="Where the index is stored and scored: `embedded` (files in the workspace, "
        "BM25 by bm25s, brute-force numpy dense scoring) or `milvus` (Milvus Lite file or a Milvus server)."
    )
    milvus_uri: str | None = Field(
        None, description="milvus engine: a `.db` file path (Milvus Lite, in process; relative to the workspace) "
        "or `http(s)://host:19530` (Milvus standalone or cluster); none = `.skillrag/milvus.db`."
    )
    milvus_token: str | None = Field(
        None, description="milvus engine: `user:password` or API key; $SKILLRAG_MILVUS_TOKEN wins when set."
    )
    milvus_database: str | None = Field(None, description="milvus engine: database name; none = the default one.")
    milvus_collection: str = Field(
        "skillrag", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,200}$",
        description="milvus engine: collection-name prefix (`<prefix>_<backend>_items|passages|meta`).",
    )
    milvus_index: Literal["FLAT", "AUTOINDEX"] = Field(
        "FLAT", description="milvus engine: dense index; FLAT is exact (the embedded engine's ranking), "
        "AUTOINDEX lets Milvus choose an approximate one (faster at millions of passages)."
    )
    milvus_timeout_s: float = Field(
        10.0, gt=0, description="milvus engine: connection and per-call timeout, in seconds."
    )


class WikiSettings(_Section):
    """Navigation layer: how pages are built over the articles."""

    builder: Literal["extractive", "llm", "agent"] = Field(
        "extractive", description="Default page builder (agent: prepared for coding agents, `wiki build --builder agent`).")
    variant: Literal["full", "no-merge", "no-intent", "pooled-links"] = Field(
        "full", description="Layer variant (ablations of paper table 3)."
    )
    model: str | None = Field(None, description="Model id for the llm builder, e.g. `openai:gpt-4.1`.")
    candidate_pages: int = Field(5, ge=1, le=50, description="Existing pages shown to the model per article.")
    max_retries: int = Field(2, ge=0, description="Retries per article after an invalid page.")
    concurrency: int = Field(1, ge=1, le=32, description="Model calls in flight at once.")
    max_group: int = Field(
        5, ge=1, le=100, description="Extractive builder: most articles in one topic page clustered by text "
        "similarity (families found from ids, titles or names are never split), in articles."
    )
    max_steps: int = Field(
        40, ge=1, le=500, description="Extractive builder: procedure steps on one entity page (its article list "
        "is never capped), in steps."
    )


class ModelSettings(_Section):
    """The model layer: default chat model and request limits."""

    default: str | None = Field(None, description="Default model id (`provider:model`); none = offline.")
    judge: str | None = Field(None, description="Model id for evaluation judges.")
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout, in seconds.")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature; none = provider default.")
    max_output_tokens: int | None = Field(
        None, ge=1, description="Cap on tokens per model response; none = provider default."
    )


class Budgets(BaseModel):
    """The per-case budgets a run is held to: the one declaration. The workspace's ``harness:`` section
    carries them (``HarnessSettings`` is a ``Budgets``); a skill's ``budgets:``, an evaluation arm's
    ``budget``/``matched_effort`` and a caller's override are ``BudgetOverrides`` (the same fields, each
    optional). ``Budgets.resolve`` is the one place they are combined. The tools' ledger keeps the three
    it counts as ``skillrag.skill.budget.BudgetLimits.of(budgets)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_queries: int = Field(8, ge=1, description="Retrieve calls per case.")
    max_fetches: int = Field(12, ge=0, description="Articles read with get_article per case (re-reads are free).")
    max_save_retries: int = Field(3, ge=0, description="Rejected saves sent back to the model before failing.")
    max_tokens: int = Field(200_000, ge=1, description="Total model tokens per case.")
    max_seconds: float = Field(600.0, gt=0, description="Wall time per case, in seconds.")

    @classmethod
    def resolve(
        cls,
        defaults: Budgets,
        skill: BaseModel | None = None,
        override: BaseModel | Mapping[str, Any] | None = None,
    ) -> Budgets:
        """``defaults`` (the workspace's ``harness`` settings), replaced by the skill's non-null
        ``budgets``, replaced by the non-null fields of ``override`` (a ``Budgets``, ``BudgetOverrides``
        or a dict of fields: an evaluation arm's budget, a caller's). Raises ``pydantic.ValidationError``
        on bad values."""
        values: dict[str, Any] = {name: getattr(defaults, name) for name in cls.model_fields}
        for layer in (skill, override):
            given = layer.model_dump() if isinstance(layer, BaseModel) else dict(layer or {})
            values.update({k: v for k, v in given.items() if v is not None and k in cls.model_fields})
        return cls.model_validate(values)


class _Overrides(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _overrides() -> type[_Overrides]:
    """``Budgets``' fields, each optional with default ``None`` and the same bounds and description."""
    fields: dict[str, Any] = {}
    for name, f in Budgets.model_fields.items():
        opt: Any = Field(None, description=f.description)  # a FieldInfo (the plugin types it as its default)
        opt.metadata = list(f.metadata)
        fields[name] = (f.annotation | None, opt)  # type: ignore[operator]
    return create_model("BudgetOverrides", __base__=_Overrides, __module__=__name__, **fields)


if TYPE_CHECKING:
    BudgetOverrides = _Overrides
else:
    BudgetOverrides = _overrides()
    BudgetOverrides.__doc__ = (
        "Some of the per-case budgets (``Budgets``' fields, each optional): a skill's ``budgets:``, an "
        "evaluation arm's ``budget``. ``None`` = the setting below it (``Budgets.resolve``).")


class HarnessSettings(Budgets):
    """The agent loop: which harness runs a case and its budgets (the ``Budgets`` fields)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    harness: Literal["extractive", "llm"] = Field("extractive", description="Default harness.")
    skill: str = Field("cs-guidance", description="Default skill name (a folder under skills/).")
    workers: int = Field(1, ge=1, le=64, description="Cases run at once by run-batch.")
    guided: bool = Field(
        False,
        description="LLM harness: force the tool the workflow expects next on every turn (for small local "
        "models that do not choose tools themselves).",
    )


class SkillWebSettings(_Section):
    """Web policy of one skill in the HTTP service (until ``skill.yaml`` carries these fields)."""

    web_mode: Literal["off", "fallback", "always"] = Field(
        "off", description="`fallback`: only when retrieval finds nothing relevant (once per turn); `always`: once per turn."
    )
    web_allowlist: list[str] = Field(default_factory=list, description="Hosts the web may read (exact host or subdomain).")


class ServiceSettings(_Section):
    """The HTTP service (`skillrag serve`): address, web fallback and per-turn loop caps."""

    host: str = Field("127.0.0.1", description="Interface to bind; loopback by default.")
    port: int = Field(8765, ge=1, le=65535, description="TCP port.")
    web_search_url: str | None = Field(
        None, description="SearXNG-compatible JSON search endpoint (e.g. `http://127.0.0.1:8888/search`); none = web off."
    )
    web_allowlist: list[str] = Field(
        default_factory=list, description="Hosts the web may read for chats without a skill (exact host or subdomain)."
    )
    web_timeout_s: float = Field(
        10.0, gt=0, description="Per web request timeout (connect, and each read or write), in seconds."
    )
    web_fetch_deadline_s: float = Field(
        20.0, gt=0, description="Wall-clock limit for fetching one web page (every redirect hop and the whole "
        "body), in seconds; a slower page is dropped and the turn goes on."
    )
    web_max_redirects: int = Field(5, ge=0, le=20, description="Redirect hops followed per fetch, each one checked.")
    web_max_results: int = Field(3, ge=1, le=20, description="Web pages fetched per turn.")
    web_max_bytes: int = Field(2_000_000, ge=1024, description="Largest web page read, in bytes.")
    web_allow_private: bool = Field(
        False, description="Let the web fallback read loopback, private and link-local addresses (`localhost`, "
        "`127.0.0.1`, `10.x`, `169.254.x`, names resolving there); off: such allowlist entries are refused and "
        "a host resolving to one is dropped."
    )
    max_body_bytes: int = Field(
        1_000_000, ge=1024, description="Largest request body accepted, in bytes (HTTP 413 past it): refused from "
        "its Content-Length before anything is read, else as soon as the bytes read pass it."
    )
    allowed_hosts: list[str] = Field(
        default_factory=list, description="Host header values accepted when serving without a token (`name` for "
        "any port, `name:port`), besides localhost, 127.0.0.1 and [::1] on the served port; others get HTTP 400."
    )
    max_retrieval_rounds: int = Field(3, ge=1, description="Retrieval calls per chat turn.")
    max_tool_calls: int = Field(8, ge=1, description="Tool calls (retrieve, article, web) per chat turn.")
    max_tokens: int = Field(20_000, ge=1, description="Model tokens per chat turn (input + output).")
    turn_deadline_s: float = Field(
        120.0, gt=0, description="Wall-clock limit for one chat turn, in seconds; past it the turn ends with "
        "status budget_exceeded."
    )
    history_turns: int = Field(6, ge=0, description="Previous turns of the same thread shown when condensing.")
    allowed_models: list[str] = Field(
        default_factory=list, description="Model ids a chat request may pick; others are refused (HTTP 400)."
    )
    skill_web: dict[str, SkillWebSettings] = Field(
        default_factory=dict, description="Per-skill web policy, by skill name (overridden by skill.yaml fields)."
    )
    judge_model: str | None = Field(
        None, description="Model id (`provider:model`) of the judge that scores each served /chat answer and each "
        "/runs run after its response has gone out (a background task; a failing or slow judge never touches the "
        "answer); none = no live scoring. Keep it apart from the answering model."
    )
    judges: list[str] = Field(
        default_factory=lambda: ["correctness"], description="Judges run on live traffic: only reference-free ones "
        "(`correctness`); the reference-based judges run offline with `skillrag eval score --cases GOLDEN`."
    )
    judge_calls: int = Field(1, ge=1, le=15, description="Judge calls per decision (odd; strict majority), in calls.")
    judge_temperature: float | None = Field(0.0, ge=0, le=2, description="Judge sampling temperature; none = "
                                            "provider default.")
    trace_url: str | None = Field(
        None, description="Link template of a trace viewer for the review page, with `{trace_id}` (e.g. "
        "`http://127.0.0.1:16686/trace/{trace_id}` for Jaeger); none = the trace id is shown, not linked."
    )

    @field_validator("trace_url")
    @classmethod
    def _trace_url(cls, value: str | None) -> str | None:
        if value is not None and (not value.startswith(("http://", "https://")) or "{trace_id}" not in value):
            raise ValueError("must be an http(s) URL containing {trace_id}")
        return value


class WorkspaceConfig(_Section):
    """The whole of ``skillrag.yaml``."""

    name: str = Field("skillrag", description="Workspace name, shown in reports.")
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    wiki: WikiSettings = Field(default_factory=WikiSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    harness: HarnessSettings = Field(default_factory=HarnessSettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)


M = TypeVar("M", bound=BaseModel)


def load_yaml_model(path: Path, model: type[M], *, missing_ok: bool = False) -> M:
    """Read the YAML mapping at ``path`` into ``model`` (a pydantic model class).

    Raises ``ConfigError`` naming the file and the first bad field (``unknown setting`` for a key
    the model does not have). ``missing_ok`` returns ``model()`` (all defaults) for a missing file.
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        if missing_ok:
            return model()
        raise ConfigError(f"{path}: no such config file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
        raise ConfigError(f"{path}: {where}: {msg}") from None


def load_config(path: Path) -> WorkspaceConfig:
    """Read and validate ``skillrag.yaml``; raises ``ConfigError`` with the first bad field."""
    return load_yaml_model(path, WorkspaceConfig)


def dump_config(config: WorkspaceConfig) -> str:
    """YAML text for ``config`` (every field, defaults included)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
