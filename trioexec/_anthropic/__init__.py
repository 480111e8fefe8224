"""The Anthropic layer: stream events to sealed tool calls, one assistant turn, the agent loop."""
