"""One thin module per user command (see uvdock.cli.main.COMMANDS for the table)."""
