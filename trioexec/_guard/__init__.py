"""Who may run what: the permission chain, rules, protected paths, settings files."""
