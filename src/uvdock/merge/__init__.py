"""The three-way merge of pyproject.toml: entry by entry, git's bytes kept where they mean the same."""
