"""What is never indexed (SPEC H2), who may see what (H15) and which spaces a search covers (H14).

The rules are data (a frozen ``Policy``); the loader asks it about each path, table and column
and writes every refusal into an ``IndexingReport`` as a ``Skip`` naming the rule that fired.
No rule ever fails a build.

The package: ``never_index`` (``Policy``, its file rules and caps), ``tables`` and ``secret_rules``
(its rules for tables and for secrets), ``decode`` (text or binary, and the encoding), ``report``
(``Skip``, ``IndexingReport``) and ``access`` (visibility and space selection); the names below
are its public face.
"""
from __future__ import annotations

from searchkit.ingest.policy.access import (
    CONTAINERS, MAX_SPACES, SKIP_REASONS, SpaceLike, can_see, searchable_spaces,
)
from searchkit.ingest.policy.decode import BINARY_SIGNATURES, Decoded, binary_reason, decode_text
from searchkit.ingest.policy.never_index import CAPS, DEFAULT_POLICY, Policy
from searchkit.ingest.policy.report import RULES, IndexingReport, Skip
from searchkit.ingest.policy.tables import name_tokens

__all__ = [
    "BINARY_SIGNATURES", "CAPS", "CONTAINERS", "DEFAULT_POLICY", "MAX_SPACES", "RULES", "SKIP_REASONS",
    "Decoded", "IndexingReport", "Policy", "Skip", "SpaceLike", "binary_reason", "can_see", "decode_text",
    "name_tokens", "searchable_spaces",
]
