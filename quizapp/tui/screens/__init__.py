"""The TUI's screens: each composes widgets and talks to the App through messages and actions."""
