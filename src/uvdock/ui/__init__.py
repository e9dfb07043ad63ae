"""What the user sees: output, redaction, terminal-safe and Markdown-safe text."""
