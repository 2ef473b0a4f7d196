"""Definitions written from elsewhere: an OpenClaw config, the shipped starter catalog."""
