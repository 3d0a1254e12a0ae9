"""Bitext export: sentence splitting, sentence alignment inside document pairs, pair filters, output formats."""
