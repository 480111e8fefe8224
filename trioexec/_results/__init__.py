"""The results on their way to the model: persistence, the message budget, the next message."""
