"""`uvdock recipe ...`: one module per subcommand, and the mark/unmark body they share."""
