"""Claude Code hooks: configuration, running them (command, HTTP), combining answers."""
