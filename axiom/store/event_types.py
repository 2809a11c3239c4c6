"""Every event type Axiom appends, named once.

Events are facts in the past tense. Modules that append or fold an event import its name
from here; no other module spells an event type as a bare string. A test checks that every
type found in the code is listed here and documented in `DESCRIPTIONS`.
"""

from __future__ import annotations

# Ingest
SESSION_INGESTED = "session_ingested"

# Builds (one per session ingest and build spec)
BUILD_STARTED = "build_started"
BUILD_FINISHED = "build_finished"

# Extraction, evidence, graduation
MEMORY_EXTRACTED = "memory_extracted"
EVIDENCE_ALIGNED = "evidence_aligned"
IDRIS_CHECKED = "idris_checked"
ENTRY_CREATED = "entry_created"
ENTRY_PROMOTED = "entry_promoted"
ENTRY_STATUS_CHANGED = "entry_status_changed"
ENTRY_DEMOTED = "entry_demoted"
ENTRY_APPROVED = "entry_approved"
PROMOTION_BLOCKED = "promotion_blocked"

# Tasks, conditions, artifacts
TASK_CREATED = "task_created"
TASK_STATUS_CHANGED = "task_status_changed"
TASK_PRIORITY_CHANGED = "task_priority_changed"
TASK_TITLE_CHANGED = "task_title_changed"
TASK_BLOCKERS_SET = "task_blockers_set"
TASK_TRANSITION_REJECTED = "task_transition_rejected"
TASK_MENTIONED = "task_mentioned"
TASK_INPUT_REJECTED = "task_input_rejected"
CONDITION_DECLARED = "condition_declared"
ARTIFACT_DECLARED = "artifact_declared"
CONDITION_RESOLVED_TO = "condition_resolved_to"

# Conflicts and forgetting
CONFLICT_DETECTED = "conflict_detected"
CONFLICT_RESOLVED = "conflict_resolved"
REDACTED = "redacted"
DECISION_RECORDED = "decision_recorded"

DESCRIPTIONS: dict[str, str] = {
    SESSION_INGESTED: "a transcript (filtered for privacy) was stored: its messages and metadata",
    BUILD_STARTED: "a build of one session ingest began, with the spec it runs",
    BUILD_FINISHED: "a build ended (finished or failed), with each stage's latency",
    MEMORY_EXTRACTED: "an extractor proposed entries with quotes (no spans)",
    EVIDENCE_ALIGNED: "the aligner found (or failed to find) each quote's span",
    IDRIS_CHECKED: "a candidate was checked by idris2 or the built-in checker",
    ENTRY_CREATED: "an entry was materialized with its stage and evidence",
    ENTRY_PROMOTED: "an entry moved up a stage",
    PROMOTION_BLOCKED: "an entry could not move up a stage, with the reason",
    ENTRY_STATUS_CHANGED: "an entry's status changed (superseded, contested, ...)",
    ENTRY_DEMOTED: (
        "an entry dropped a stage because it was not restated for a half-life; names the"
        " demotion policy version and the time it was computed for"
    ),
    ENTRY_APPROVED: "a person approved an entry, which certifies it",
    TASK_CREATED: "a task entity was created from a mention",
    TASK_STATUS_CHANGED: "a task's status changed",
    TASK_PRIORITY_CHANGED: "a task's priority changed",
    TASK_TITLE_CHANGED: "a task was renamed",
    TASK_BLOCKERS_SET: "a task's blockers were replaced or suggested",
    TASK_TRANSITION_REJECTED: "a task change was refused, with the reason",
    TASK_MENTIONED: "a session mentioned a task (matched or new)",
    TASK_INPUT_REJECTED: "part of a task observation could not be used, kept as found",
    CONDITION_DECLARED: "a blocker that is not a task became a condition",
    ARTIFACT_DECLARED: "a blocker naming a ticket, issue or URL became an artifact",
    CONDITION_RESOLVED_TO: "a condition was linked to the task or artifact it stands for",
    CONFLICT_DETECTED: "two entries about the same subject disagree; both became contested",
    CONFLICT_RESOLVED: "a person settled a conflict (keep_newer, keep_older, keep_both,"
    " reject_both), or a session took its side back (taken_back_newer/older/both)",
    DECISION_RECORDED: "a decision was recorded in the ledger, citing verified evidence",
    REDACTED: "a session, entry or time range was forgotten (a tombstone: what, when, who)",
}

ALL_EVENT_TYPES: frozenset[str] = frozenset(DESCRIPTIONS)
