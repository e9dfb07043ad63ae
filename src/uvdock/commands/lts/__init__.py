"""`uvdock lts ...`: one module per subcommand."""
