"""The decision ledger: decisions that cite only verified or certified evidence."""
