"""The portable skill: cases, the four tools, the evidence contract, skill folders, export.

See ``docs/INTERFACES.md`` §skill. Ground truth lives in ``GroundTruth`` and is reachable only
through ``CaseFile.ground_truth``; every agent-facing type (``Case``, tool results) has no field
for it.
"""

from skillrag.skill.cases import AGENT_FIELDS, Case, CaseFile, CaseRecord, GroundTruth, Message, write_cases
from skillrag.skill.config import SkillBudgets, SkillConfig, load_skill_config
from skillrag.skill.contract import ContractLimits, locate, normalize, validate_output
from skillrag.skill.registry import (
    Skill,
    SkillRegistry,
    builtin_skills_dir,
    ingest_references,
    install_builtin_skills,
    load_skill,
)
from skillrag.skill.spec import check_skill_folder
from skillrag.skill.tau2 import import_tau2
from skillrag.skill.tools import ArticleView, EvidenceRecord, SavedOutput, SkillTools, ToolCall, hit_to_dict

__all__ = [
    "AGENT_FIELDS",
    "ArticleView",
    "Case",
    "CaseFile",
    "CaseRecord",
    "ContractLimits",
    "EvidenceRecord",
    "GroundTruth",
    "Message",
    "SavedOutput",
    "Skill",
    "SkillBudgets",
    "SkillConfig",
    "SkillRegistry",
    "SkillTools",
    "ToolCall",
    "builtin_skills_dir",
    "check_skill_folder",
    "hit_to_dict",
    "import_tau2",
    "ingest_references",
    "install_builtin_skills",
    "load_skill",
    "load_skill_config",
    "locate",
    "normalize",
    "validate_output",
    "write_cases",
]
