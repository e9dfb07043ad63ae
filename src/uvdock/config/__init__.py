"""Configuration: defaults, [tool.uvdock] or uvdock.toml, UVDOCK_* variables, and which settings need trust."""
