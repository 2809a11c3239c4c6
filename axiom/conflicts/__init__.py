"""Conflicts between memories: detection (pure rule), the conflicts ledger, resolution."""
