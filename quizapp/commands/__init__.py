"""The body of each CLI verb, kept apart from click wiring so each imports only what it needs."""
