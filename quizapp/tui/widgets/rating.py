"""The FSRS rating buttons: Again / Hard / Good / Easy, each with the interval it would give."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from textual import on
from textual.binding import Binding
from textual.containers import HorizontalGroup
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button

from quizapp.study.schedule import RATING_NAMES, format_interval


class RatingBar(HorizontalGroup, can_focus=True):
    """Enter accepts the selected rating (prefilled from the answer); 1-4 rate at once; ←→ change it."""

    DEFAULT_CSS = """
    RatingBar { height: auto; padding: 0 1; }
    RatingBar > Button { width: 1fr; min-width: 11; margin: 0 1 0 0; }
    RatingBar:focus > Button.-selected { text-style: bold; }
    """

    BINDINGS = [
        Binding("enter", "confirm", "Save rating", tooltip="Save your answer with the selected rating and go on"),
        Binding("left", "step(-1)", "Previous rating", show=False),
        Binding("right", "step(1)", "Next rating", show=False),
        *(Binding(str(r), f"rate({r})", name, tooltip=f"Rate {name} and go on") for r, name in RATING_NAMES.items()),
    ]

    selected = reactive(3, init=False)

    @dataclass
    class Rated(Message):
        rating: int

    def __init__(self, intervals: dict[int, timedelta], suggested: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.intervals = intervals
        self.set_reactive(RatingBar.selected, suggested)

    def compose(self):
        for rating, name in RATING_NAMES.items():
            interval = format_interval(self.intervals[rating])
            chosen = rating == self.selected
            button = Button(f"{rating} {name} {interval}", id=f"rate-{rating}", tooltip=f"{name}: next review in {interval}",
                            variant="primary" if chosen else "default", classes="-selected" if chosen else "",
                            compact=True)
            button.can_focus = False
            yield button

    def watch_selected(self, selected: int) -> None:
        for button in self.query(Button):
            chosen = button.id == f"rate-{selected}"
            button.variant = "primary" if chosen else "default"
            button.set_class(chosen, "-selected")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_rate(int(event.button.id.removeprefix("rate-")))

    def action_step(self, step: int) -> None:
        self.selected = max(1, min(4, self.selected + step))

    def action_confirm(self) -> None:
        self.post_message(self.Rated(self.selected))

    def action_rate(self, rating: int) -> None:
        self.selected = rating
        self.post_message(self.Rated(rating))
