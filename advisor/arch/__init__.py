"""What a model is: its description from a config.json, parameter counts, weight formats."""
