"""Tables of the store (SQLAlchemy Core), the same on SQLite and PostgreSQL. Only the store
package imports this module: everything else goes through ``Store``.

JSON-ish fields are TEXT holding canonical JSON (sorted keys) so that both backends store
byte-identical values and exports stay reproducible.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

metadata = MetaData()

settings = Table(
    "settings",
    metadata,
    Column("key", String(100), primary_key=True),
    Column("value", Text, nullable=False),
)

images = Table(
    "images",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("path", Text, nullable=False),  # relative to the image folder
    Column("format", String(16), nullable=False),
    Column("width", Integer, nullable=False),
    Column("height", Integer, nullable=False),
    Column("bytes", Integer, nullable=False),
)

items = Table(
    "items",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("prompt", Text, nullable=False),
    Column("category", String(100), nullable=False, index=True),
    Column("reference", Text),
    Column("source", String(200), nullable=False, default=""),
    Column("metadata", Text, nullable=False, default="{}"),
    Column("created_at", String(32), nullable=False),
    Column("id_skeleton", Text),  # curate/lookalike.py: finds stored ids that look like a new one
    Index("ix_items_skeleton", "id_skeleton"),
)

item_images = Table(
    "item_images",
    metadata,
    Column("item_id", String(200), ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("source", Text, nullable=False),
    Column("sha256", String(64), ForeignKey("images.sha256")),
    Column("status", String(16), nullable=False),
    Column("error", Text),
)

candidates = Table(
    "candidates",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("item_id", String(200), ForeignKey("items.id", ondelete="CASCADE"), nullable=False),
    Column("model", String(200), nullable=False),
    Column("text", Text, nullable=False),
    Column("params", Text, nullable=False, default="{}"),
    Column("params_key", String(64), nullable=False, default=""),
    Column("sample_index", Integer, nullable=False, default=0),
    Column("prompt_tokens", Integer),
    Column("completion_tokens", Integer),
    Column("created_at", String(32), nullable=False),
    # also the index of an item's candidates (it leads with item_id): a second index on
    # item_id alone cost every candidate written an index entry more (store/migrations.py)
    UniqueConstraint("item_id", "model", "params_key", "sample_index", name="uq_candidate_key"),
)

# The parts of a candidate response with images, in order (model.Part): a text part
# holds ``text``; an image part the image as item_images holds it (``sha256`` NULL when the
# image is missing). A plain-text candidate has no rows here: ``candidates.text`` is all of it.
candidate_parts = Table(
    "candidate_parts",
    metadata,
    Column("candidate_id", String(200), ForeignKey("candidates.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("kind", String(16), nullable=False),  # model.PartKind
    Column("text", Text),
    Column("source", Text),
    Column("sha256", String(64), ForeignKey("images.sha256")),
    Column("status", String(16)),
    Column("error", Text),
)

# A request that still failed after its retries: kept so a resumed run can retry it and a
# summary can count it; removed when the same key later succeeds.
sample_failures = Table(
    "sample_failures",
    metadata,
    Column("item_id", String(200), ForeignKey("items.id", ondelete="CASCADE"), primary_key=True),
    Column("model", String(200), primary_key=True),
    Column("params_key", String(64), primary_key=True),
    Column("sample_index", Integer, primary_key=True),
    Column("attempts", Integer, nullable=False),
    Column("error", Text, nullable=False),
    Column("created_at", String(32), nullable=False),
)

pairs = Table(
    "pairs",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("item_id", String(200), ForeignKey("items.id", ondelete="CASCADE"), nullable=False),
    Column("first_id", String(200), ForeignKey("candidates.id"), nullable=False),
    Column("second_id", String(200), ForeignKey("candidates.id"), nullable=False),
    Column("origin", String(100), nullable=False),
    Column("auto_first", String(16)),
    Column("auto_second", String(16)),
    Column("auto_method", String(100)),
    Column("known_preference", String(16)),
    Column("task", String(32)),
    Column("status", String(16), nullable=False, default="candidate"),
    Column("reason", Text),
    Column("is_gold", Boolean, nullable=False, default=False),
    Column("metadata", Text, nullable=False, default="{}"),
    Column("created_at", String(32), nullable=False),
    Column("id_skeleton", Text),  # as items.id_skeleton
    Column("scheme", String(100)),  # model.Pair.scheme: NULL is mmrb
    Column("scheme_version", Integer),
    Index("ix_pairs_item", "item_id"),
    Index("ix_pairs_status", "status"),
    Index("ix_pairs_skeleton", "id_skeleton"),
)

annotators = Table(
    "annotators",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("role", String(16), nullable=False, default="annotator"),
    Column("password_hash", Text),
    Column("active", Boolean, nullable=False, default=True),
    Column("created_at", String(32), nullable=False),
    # Epoch seconds of the last "end every session" (password reset, disable, role change):
    # an identity from the organisation's sign-in (OIDC) issued before it cannot start a new one.
    Column("sessions_not_before", Float),
    Column("qualification", String(16)),  # model.QualificationState, NULL: none asked
    Column("paused", Text),  # why the queue serves this account nothing (low reliability), NULL: not paused
)

# Sign-in sessions live here, not in the browser: the browser holds a random token (an
# httpOnly cookie) and the store only its hash, so deleting a row ends that session at once in
# every tab and every app process. A new session first gets a one-time handoff code that the
# page trades for the cookie (annotate/web.py), so the token itself never passes through page
# script.
sessions = Table(
    "sessions",
    metadata,
    Column("id", String(64), primary_key=True),  # held by the app process only, never sent to a browser
    Column("annotator", String(100), ForeignKey("annotators.name", ondelete="CASCADE"), nullable=False),
    Column("token_hash", String(64), unique=True),  # sha256 of the cookie; empty until the handoff
    Column("handoff_hash", String(64), unique=True),  # sha256 of the one-time code, cleared once used
    Column("handoff_until", Float),
    Column("created_at", Float, nullable=False),  # epoch seconds
    Column("expires_at", Float, nullable=False),
    Index("ix_sessions_annotator", "annotator"),
)

# Sign-in attempts that were not refused and did not succeed, kept in the store so that the
# throttle holds across app processes. An attempt is written before its password is checked
# (one row per throttle key) and removed again if it is refused or succeeds.
signin_attempts = Table(
    "signin_attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("attempt", String(32), nullable=False),  # random, shared by the rows of one attempt
    Column("key", String(300), nullable=False),  # "name:<as typed>" or "client:<address>"
    Column("at", Float, nullable=False),  # epoch seconds
    Index("ix_signin_attempts_key_at", "key", "at"),
    Index("ix_signin_attempts_attempt", "attempt"),
)

assignments = Table(
    "assignments",
    metadata,
    Column("pair_id", String(200), ForeignKey("pairs.id", ondelete="CASCADE"), primary_key=True),
    Column("annotator", String(100), ForeignKey("annotators.name"), primary_key=True),
    Column("left", String(8), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("batch", String(100), nullable=False, default=""),
    Column("is_gold", Boolean, nullable=False, default=False),
    Column("state", String(8), nullable=False, default="open"),
    Column("created_at", String(32), nullable=False),
    # a control task of the qualification set (is_gold too), queued before any other work
    Column("qualification", Boolean, nullable=False, default=False, server_default=false()),
    # answers "next open pair for this annotator" straight from the index
    Index("ix_assignments_queue", "annotator", "state", "seq"),
)

labels = Table(
    "labels",
    metadata,
    Column("pair_id", String(200), ForeignKey("pairs.id", ondelete="CASCADE"), primary_key=True),
    Column("annotator", String(100), ForeignKey("annotators.name"), primary_key=True),
    Column("correctness_first", String(16)),
    Column("correctness_second", String(16)),
    Column("preference", String(16)),
    Column("rationale", Text, nullable=False, default=""),
    Column("flag", String(32)),
    Column("flag_note", Text, nullable=False, default=""),
    Column("seconds", Float),
    Column("status", String(16), nullable=False),
    Column("ratings", Text, nullable=False, default="{}"),
    Column("source", String(100), nullable=False, default="app"),
    Column("revision", Integer, nullable=False, default=0),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("scheme_version", Integer),
    Column("guidelines_version", Integer),  # the guidelines the label was made under; NULL: none recorded
    Index("ix_labels_annotator_updated", "annotator", "updated_at"),
)

# Every earlier version of a label, written in the same transaction as the change.
label_history = Table(
    "label_history",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("pair_id", String(200), nullable=False),
    Column("annotator", String(100), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("snapshot", Text, nullable=False),  # the label as canonical JSON
    Column("replaced_at", String(32), nullable=False),
    Column("action", String(16), nullable=False),  # "edit" or "undo"
    Index("ix_label_history_pair", "pair_id", "annotator"),
)

adjudications = Table(
    "adjudications",
    metadata,
    Column("pair_id", String(200), ForeignKey("pairs.id", ondelete="CASCADE"), primary_key=True),
    Column("admin", String(100), nullable=False),
    Column("preference", String(16)),
    Column("correctness_first", String(16)),
    Column("correctness_second", String(16)),
    Column("exclude", Boolean, nullable=False, default=False),
    Column("note", Text, nullable=False, default=""),
    Column("created_at", String(32), nullable=False),
    Column("ratings", Text),  # canonical JSON; NULL (a store before schemes): none
)

# The known answer of a pair (model.Gold). Read only by the lead's figures, the control tasks'
# scoring and the build: no annotator-facing query touches it.
gold = Table(
    "gold",
    metadata,
    Column("pair_id", String(200), ForeignKey("pairs.id", ondelete="CASCADE"), primary_key=True),
    Column("source", String(16), nullable=False),  # model.GoldSource
    Column("preference", String(16)),
    Column("correctness_first", String(16)),
    Column("correctness_second", String(16)),
    Column("note", Text, nullable=False, default=""),
    Column("created_at", String(32), nullable=False),
    Column("ratings", Text),  # canonical JSON; NULL (a store before schemes): none
)

# Annotation schemes as assigned (curate/schemes.py): each version's definition, the scheme's
# table as canonical JSON, so that the app renders a scheme file it never read.
schemes = Table(
    "schemes",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("definition", Text, nullable=False),
    Column("created_at", String(32), nullable=False),
)

# The project's labelling guidelines, one row per version (store/guidelines.py): a change adds
# a version, none is rewritten, so a label's ``guidelines_version`` always names the text it
# was made under.
guidelines = Table(
    "guidelines",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("text", Text, nullable=False),
    Column("author", String(100), nullable=False),  # an account, or "cli:<user>" for `mmrb guidelines set`
    Column("created_at", String(32), nullable=False),  # UTC, ISO 8601
)

# What the lead's work changed, who changed it and when (store/audit.py), each row written in
# the transaction of the change it records.
audit = Table(
    "audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", String(32), nullable=False),  # UTC, ISO 8601
    Column("who", String(100), nullable=False),
    Column("what", String(50), nullable=False),  # model.AUDIT_ACTIONS
    Column("subject", Text, nullable=False, default=""),  # the account, pair or batch it was done to
    Column("details", Text, nullable=False, default="{}"),  # canonical JSON
    Index("ix_audit_at", "at"),
)

# Judge runs (evaluation and AI-assisted selection share them).
judge_runs = Table(
    "judge_runs",
    metadata,
    Column("id", String(100), primary_key=True),
    Column("purpose", String(16), nullable=False),  # "evaluate", "select" or "bestofn"
    Column("judge", String(200), nullable=False),
    Column("config", Text, nullable=False),
    Column("dataset", Text, nullable=False, default=""),  # JSON {"paths", "limit", "name"} (RunDataset)
    Column("created_at", String(32), nullable=False),
    # After each pass: "complete" (every planned judgment has an answer), else "incomplete"
    # (failed requests or judgments never sent); NULL for runs stored before version 2.
    Column("status", String(16)),
    Column("planned", Integer),  # judgments the last pass asked for
    Column("failed", Integer),  # of those, stored as failures (outcome "error")
)

judgments = Table(
    "judgments",
    metadata,
    Column("run_id", String(100), ForeignKey("judge_runs.id", ondelete="CASCADE"), primary_key=True),
    Column("pair_id", String(200), primary_key=True),  # a dataset row id, not always in `pairs`
    Column("order", String(8), primary_key=True),  # "forward" (first shown as A) or "reverse"
    Column("sample_index", Integer, primary_key=True),
    Column("prompt", Text, nullable=False, default=""),
    Column("raw", Text),
    Column("verdict", String(16)),  # "first" / "second" / "tie" in canonical terms, or None
    Column("outcome", String(16), nullable=False),  # "parsed", "unparsed", "both", "error"
    Column("score_first", Float),
    Column("score_second", Float),
    Column("prompt_tokens", Integer),
    Column("completion_tokens", Integer),
    Column("error", Text),
    Column("created_at", String(32), nullable=False),
)

# The orientation a judge run showed each dataset pair in (schema version 10): which stored side
# held the chosen response. Verdicts are stored as first/second of it, and a stored run is read
# back with it (mmrb_eval/runs.py) rather than with the orientation computed again; a run
# stored before has no rows here.
run_orientations = Table(
    "run_orientations",
    metadata,
    Column("run_id", String(100), ForeignKey("judge_runs.id", ondelete="CASCADE"), primary_key=True),
    Column("pair_id", String(200), primary_key=True),
    Column("chosen", String(8), nullable=False),  # "first" or "second"
)
