"""Forgetting: a session, an entry or everything before a date, gone from disk."""
