"""`uvdock image ...`: one module per subcommand."""
