"""Agent behaviour: how two agents act in their logs (tool calls, which tools, failures), tested per conversation."""
