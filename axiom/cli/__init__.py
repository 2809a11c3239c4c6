"""`python -m axiom`: the command-line driver, one module per area of commands."""
