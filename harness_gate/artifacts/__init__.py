"""Artifact parsing: exact-heading Markdown documents and their JSON blocks."""
