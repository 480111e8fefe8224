"""The tool contract: what a tool is and declares, its registry, validation, rules."""
