"""OpenClaw's vocabulary as data: tool and key names, per-channel session-key rules, request
context classes."""
