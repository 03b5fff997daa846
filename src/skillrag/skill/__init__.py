"""The portable skill: cases, the four tools, the evidence contract, skill folders, export.

See ``docs/INTERFACES.md`` §skill. Ground truth lives in ``GroundTruth`` and is reachable only
through ``CaseFile.ground_truth``; every agent-facing type (``Case``, tool results) has no field
for it.
"""

from skillrag.skill.budget import BudgetLedger, BudgetLimits, BudgetState
from skillrag.skill.cases import AGENT_FIELDS, Case, CaseFile, CaseRecord, GroundTruth, Message, write_cases
from skillrag.skill.config import SkillConfig, load_skill_config
from skillrag.skill.contract import ContractLimits, locate, normalize, validate_output
from skillrag.skill.gaps import Gap, evidence_gaps
from skillrag.skill.registry import (
    Skill,
    SkillRegistry,
    builtin_skills_dir,
    ingest_references,
    install_builtin_skills,
    load_skill,
    render_manual,
)
from skillrag.skill.spec import check_skill_folder, skill_folders
from skillrag.skill.tau2 import import_tau2
from skillrag.skill.tools import (
    ArticleView,
    EvidenceRecord,
    PageRead,
    RetrieveResult,
    SavedOutput,
    SectionInfo,
    SkillTools,
    ToolCall,
    hit_to_dict,
    resolve_section,
)

__all__ = [
    "AGENT_FIELDS",
    "ArticleView",
    "BudgetLedger",
    "BudgetLimits",
    "BudgetState",
    "Case",
    "CaseFile",
    "CaseRecord",
    "ContractLimits",
    "EvidenceRecord",
    "Gap",
    "GroundTruth",
    "Message",
    "PageRead",
    "RetrieveResult",
    "SavedOutput",
    "SectionInfo",
    "Skill",
    "SkillConfig",
    "SkillRegistry",
    "SkillTools",
    "ToolCall",
    "builtin_skills_dir",
    "check_skill_folder",
    "evidence_gaps",
    "hit_to_dict",
    "import_tau2",
    "ingest_references",
    "install_builtin_skills",
    "load_skill",
    "load_skill_config",
    "locate",
    "normalize",
    "render_manual",
    "resolve_section",
    "skill_folders",
    "validate_output",
    "write_cases",
]
