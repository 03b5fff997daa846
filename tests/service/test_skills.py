"""Skill selection: /slug parsing, explicit skill wins, unknown names are errors, registry adapter."""

from __future__ import annotations

import pytest

from skillrag.errors import ConfigError, EmptyInputError, SkillNotFound
from skillrag.service.skills import SkillView, SourcePolicy, parse_slug, select_skill, view_of
from skillrag.service.testing import StaticCatalog

from .conftest import CARDS, LOANS

CAT = StaticCatalog([CARDS, LOANS])


@pytest.mark.parametrize(
    ("question", "slug", "rest"),
    [
        ("/cards how do I freeze?", "cards", "how do I freeze?"),
        ("  /loans\nrepay early", "loans", "repay early"),
        ("/cards", "cards", ""),
        ("how /cards works", None, "how /cards works"),
        ("50/50 split?", None, "50/50 split?"),
    ],
)
def test_parse_slug(question, slug, rest):
    assert parse_slug(question) == (slug, rest)


# regression: these were silent plain chats (the slug regex needed a following space and a clean name)
@pytest.mark.parametrize(
    "question",
    ["/nosuch, card fee", "/unknown? what is the fee", "/-x", "/ cards", "/cards/x what", "/", "/cards, fee",
     "  /cards?"],
)
def test_a_leading_slash_must_name_a_skill(question):
    with pytest.raises(SkillNotFound, match="does not name a skill"):
        parse_slug(question)
    with pytest.raises(SkillNotFound):
        select_skill(CAT, question, None)
    with pytest.raises(SkillNotFound):  # an explicit skill does not make a bad slug acceptable
        select_skill(CAT, question, "cards")


def test_unknown_slug_next_to_an_explicit_skill_raises():
    with pytest.raises(SkillNotFound, match="nosuch"):
        select_skill(CAT, "/nosuch card fee", "cards")


def test_slug_selects_and_is_stripped():
    view, q = select_skill(CAT, "/loans can I repay early?", None)
    assert view == LOANS and q == "can I repay early?"


def test_explicit_skill_beats_slug():
    view, q = select_skill(CAT, "/loans how do I freeze my card?", "cards")
    assert view == CARDS and q == "how do I freeze my card?"


def test_no_skill_is_a_plain_chat():
    assert select_skill(CAT, "hello there", None) == (None, "hello there")


def test_unknown_slug_and_unknown_skill_raise():
    with pytest.raises(SkillNotFound, match="retirement"):
        select_skill(CAT, "/retirement what now?", None)
    with pytest.raises(SkillNotFound, match="nope"):
        select_skill(CAT, "what now?", "nope")


def test_empty_question_after_slug():
    with pytest.raises(EmptyInputError):
        select_skill(CAT, "/cards   ", None)


class _Cfg:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _Skill:
    def __init__(self, name, config):
        self.name, self.description, self.manual, self.config = name, "d", "manual text", config


def test_view_of_reads_config_and_service_web_policy():
    from skillrag.skill import SkillConfig
    from skillrag.workspace.config import SkillWebSettings

    sk = _Skill("cs", SkillConfig(k=7, max_snippets=5, allowed_sources=["help"]))
    v = view_of(sk, SkillWebSettings(web_mode="fallback", web_allowlist=["Example.COM"]))
    assert (v.k, v.max_snippets, v.manual) == (7, 5, "manual text")
    assert v.policy == SourcePolicy(allowed_sources=["help"], web_mode="fallback", web_allowlist=["example.com"])
    assert view_of(sk).policy.web_mode == "off"
    # a skill.yaml that declares web fields itself wins over the service setting
    own = _Skill("x", _Cfg(k=3, web_mode="always", web_allowlist=["a.example"]))
    assert view_of(own, SkillWebSettings(web_mode="off")).policy.web_mode == "always"


def test_view_of_rejects_bad_allowlist():
    with pytest.raises(ConfigError, match="web_allowlist"):
        view_of(_Skill("x", _Cfg(web_mode="always", web_allowlist=["https://a.example/x"])))


def test_skill_view_is_strict():
    with pytest.raises(ValueError):
        SkillView(name="x", unknown=1)


def test_web_policy_declared_in_skill_yaml_wins_over_workspace_setting(tmp_path):
    import shutil

    from skillrag.skill import builtin_skills_dir, load_skill
    from skillrag.workspace.config import WorkspaceConfig

    folder = tmp_path / "cs-guidance"
    shutil.copytree(builtin_skills_dir() / "cs-guidance", folder)
    with (folder / "skill.yaml").open("a") as fh:
        fh.write("\nweb_mode: fallback\nweb_allowlist: [docs.example.com]\n")
    skill = load_skill(folder)
    ws_web = WorkspaceConfig.model_validate(
        {"service": {"skill_web": {"cs-guidance": {"web_mode": "always", "web_allowlist": ["other.test"]}}}}
    ).service.skill_web["cs-guidance"]
    view = view_of(skill, ws_web)
    assert view.policy.web_mode == "fallback"
    assert view.policy.web_allowlist == ["docs.example.com"]
    # a skill that declares nothing falls back to the workspace setting
    plain = load_skill(builtin_skills_dir() / "cs-guidance", builtin=True)
    assert view_of(plain, ws_web).policy.web_mode == "always"
    with (folder / "skill.yaml").open("a") as fh:
        fh.write("web_mode: sometimes\n")
    with pytest.raises(ConfigError, match="web_mode"):
        load_skill(folder)


# regression (issue 21, class 5): one skill with a bad web_allowlist entry stopped `serve` with
# "error: web_allowlist: '::1' must be a bare host name", naming neither the skill nor the file
@pytest.mark.parametrize(("entry", "says"), [("::1", "in brackets"), ("https://docs.example.com/x", "is a URL"),
                                             ("localhost", "service.web_allow_private")])
def test_a_bad_allowlist_entry_names_the_skill_and_its_file(tmp_path, entry, says):
    from skillrag.service.skills import RegistryCatalog
    from skillrag.workspace import Workspace

    ws = Workspace.init(tmp_path / "ws")
    folder = ws.skills_dir / "web-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: web-notes\ndescription: Use when testing.\n---\nbody\n")
    (folder / "skill.yaml").write_text(f"web_mode: fallback\nweb_allowlist: ['{entry}']\n")
    with pytest.raises(ConfigError) as err:
        RegistryCatalog(Workspace.open(ws.root))
    msg = str(err.value)
    assert msg.startswith(f"skill web-notes ({folder / 'skill.yaml'}): web_allowlist: ")
    assert says in msg and "\n" not in msg


def test_an_allowlist_from_the_workspace_config_names_that_file(tmp_path):
    from skillrag.service.skills import RegistryCatalog
    from skillrag.skill import install_builtin_skills
    from skillrag.workspace import Workspace, WorkspaceConfig
    from skillrag.workspace.config import dump_config

    cfg = WorkspaceConfig.model_validate(
        {"service": {"skill_web": {"cs-guidance": {"web_mode": "always", "web_allowlist": ["127.0.0.1"]}}}})
    ws = Workspace.init(tmp_path / "ws", config=cfg)
    install_builtin_skills(ws)
    with pytest.raises(ConfigError, match=r"^skill cs-guidance \(.*skillrag\.yaml: service\.skill_web\.cs-guidance\)"
                                          r": web_allowlist: '127\.0\.0\.1' is not a public address \(loopback\)"):
        RegistryCatalog(Workspace.open(ws.root))
    cfg.service.web_allow_private = True
    ws.config_path.write_text(dump_config(cfg))
    view = RegistryCatalog(Workspace.open(ws.root)).get("cs-guidance")
    assert view.policy.web_allowlist == ["127.0.0.1"] and view.policy.allowlist().allow_private
