"""Readers of the file formats uvdock edits, one per format."""
