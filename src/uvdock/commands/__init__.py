"""One thin module per user command (see uvdock.cli.COMMANDS for the table)."""
