"""`uvdock merge-driver install|pyproject`."""
