"""`uvdock lock` and `uvdock lock resolve|diff`: one module per subcommand."""
