"""The web console (/console) and the JSON management API behind it (/api)."""
