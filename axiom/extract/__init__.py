"""Extraction: turn a transcript into proposed memory entries that cite quotes.

`RuleExtractor` is the offline default; `LLMExtractor` asks an OpenAI-compatible endpoint.
Both satisfy the `Extractor` protocol and return an `ExtractionResult`.
"""

from axiom.extract.llm import EXTRACTION_PROMPT, EXTRACTION_PROMPT_HASH, LLMExtractor
from axiom.extract.rules import RULES_PROMPT_HASH, RULESET_VERSION, RuleExtractor
from axiom.extract.types import (
    ENTRY_TYPES,
    ExtractedEntry,
    ExtractedEvidence,
    ExtractionResult,
    Extractor,
    FactFields,
    TaskFields,
    make_entry_id,
    normalize_title,
)

__all__ = [
    "ENTRY_TYPES",
    "EXTRACTION_PROMPT",
    "EXTRACTION_PROMPT_HASH",
    "RULES_PROMPT_HASH",
    "RULESET_VERSION",
    "ExtractedEntry",
    "ExtractedEvidence",
    "ExtractionResult",
    "Extractor",
    "FactFields",
    "LLMExtractor",
    "RuleExtractor",
    "TaskFields",
    "make_entry_id",
    "normalize_title",
]
