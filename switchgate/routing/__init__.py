"""Which channel serves a call: channels, selection, health and cool-downs."""
