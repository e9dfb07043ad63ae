"""The file layer: text read exactly, every write to a repository file, saved state, the repository lock."""
