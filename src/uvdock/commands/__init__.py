"""One thin module per user command (see uvdock.cli.spec.COMMANDS for the table)."""
