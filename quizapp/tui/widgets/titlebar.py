"""The one-line bar at the top of every screen: the app's title and sub-title."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget


class TitleBar(Widget):
    """What Textual's Header shows for this app, in one widget instead of four.

    quizapp's titles never change while it runs, and the command palette has its own key (ctrl+p,
    listed in the footer), so Header's clickable icon and reactive title are not needed; dropping
    its three child widgets is a measurable part of getting the home screen up quickly.
    """

    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 100%;
        height: 1;
        background: $panel;
        color: $foreground;
        content-align: center middle;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def render(self) -> Content:
        return self.app.format_title(self.screen.title or self.app.title, self.screen.sub_title or self.app.sub_title)
