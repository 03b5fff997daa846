"""The service on real data: the tau2-bench banking knowledge base (698 articles, 46 dev tasks),
extractive chat under the built-in cs-guidance skill, BM25 index. Prints the measured figures.

Ground truth (``required_documents``) is read here, in the test, only to score; it never reaches the app.
"""

from __future__ import annotations

import asyncio
import statistics
import time

import httpx
import pytest

from skillrag.corpus import ArticleStore, ingest
from skillrag.search import build_index
from skillrag.service import workspace_app
from skillrag.service.testing import serve_app
from skillrag.skill import import_tau2, install_builtin_skills
from skillrag.workspace import Workspace, WorkspaceConfig

from .conftest import events_of, first


@pytest.mark.shared
@pytest.mark.slow
def test_extractive_chat_on_tau2_banking(tmp_path, tau2_dir):
    cfg = WorkspaceConfig.model_validate({"search": {"backend": "direct", "mode": "bm25", "embedder": "hash"}})
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    ingest(ws, [tau2_dir / "documents"])
    build_index(ws)
    install_builtin_skills(ws)
    store = ArticleStore(ws)
    records = import_tau2(tau2_dir / "tasks_dev.json")
    assert len(records) == 46

    async def ask(client, i, rec):
        t0 = time.perf_counter()
        r = await client.post("/chat", json={"question": rec.contact_reason[:4000], "thread_id": f"tau2-{i}",
                                             "skill": "cs-guidance"})
        return rec, events_of(r), time.perf_counter() - t0

    async def run_all(url):
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            sem = asyncio.Semaphore(20)

            async def one(i, rec):
                async with sem:
                    return await ask(client, i, rec)

            return await asyncio.gather(*(one(i, rec) for i, rec in enumerate(records)))

    with serve_app(workspace_app(ws)) as url:
        t0 = time.perf_counter()
        results = asyncio.run(run_all(url))
        wall = time.perf_counter() - t0

    n_cites = cited_hit = hit_any = 0
    recalls, latencies = [], []
    for rec, ev, secs in results:
        done = first(ev, "done")
        assert done["status"] == "ok" and done["skill"] == "cs-guidance"
        assert done["thread_key"].endswith("::cs-guidance")
        for c in done["citations"]:  # every quote is verbatim text of the article it names
            assert store.get(c["source"]).body[c["start"]:c["end"]] == c["snippet"]
            n_cites += 1
        need = set(rec.ground_truth.required_documents)
        hits = {h["article_id"] for h in first(ev, "retrieval")["hits"]}
        cited = {c["source"] for c in done["citations"]}
        recalls.append(len(hits & need) / len(need) if need else 0.0)
        hit_any += bool(hits & need)
        cited_hit += bool(cited & need)
        latencies.append(secs)
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(
        f"\ntau2 dev (46 tasks, 20 concurrent, extractive, BM25 direct, k=10): wall {wall:.1f} s; "
        f"turn latency median {statistics.median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; "
        f"{n_cites} citations, all verified; retrieval recall@10 of required documents "
        f"mean {statistics.mean(recalls):.3f}; tasks with a required document retrieved {hit_any}/46, "
        f"cited {cited_hit}/46"
    )
    assert n_cites > 46  # the extractive answer quotes something for most tasks
