"""parascout's configuration data (YAML), read with importlib.resources; no code."""
