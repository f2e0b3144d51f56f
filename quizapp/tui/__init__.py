"""The Textual TUI: the App shell (app.py), its screens and widgets. Never imports torch."""
