"""uvdock: uv inside the CI container, and honest pins, for Megatron-LM-style repositories."""

__version__ = "0.2.0"
