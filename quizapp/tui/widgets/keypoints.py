"""A card's key points as a checklist: the learner ticks what their answer covered."""

from __future__ import annotations

from rich.text import Text
from textual.actions import SkipAction
from textual.binding import Binding
from textual.widgets import SelectionList
from textual.widgets.selection_list import Selection

from quizapp.study.keypoints import rating_from_key_points
from quizapp.study.schedule import RATING_NAMES
from quizapp.tui.widgets.answers import inline_text


class KeyPointList(SelectionList[int]):
    """Space (or a click) ticks a point; Enter saves the rating, as everywhere else on a rated answer;
    `covered` and `suggested` say what the ticks mean."""

    BINDINGS = [Binding("enter", "accept", "Save rating", show=False)]

    def action_accept(self) -> None:
        """Enter saves the rating on a screen that has one (the quiz); elsewhere (the interview) it goes
        on to the screen's own Enter."""
        confirm = getattr(self.screen, "action_confirm", None)
        if confirm is None:
            raise SkipAction()
        confirm()

    DEFAULT_CSS = """
    KeyPointList { height: auto; max-height: 10; margin: 0 1; border: round $primary 50%; }
    KeyPointList:focus { border: round $primary; }
    """

    def __init__(self, points: tuple[str, ...], *, id: str | None = None) -> None:
        super().__init__(*(Selection(inline_text(p), i) for i, p in enumerate(points)), id=id)
        self.points = points
        self.border_title = "Key points: tick what your answer covered"

    @property
    def covered(self) -> list[int]:
        return sorted(self.selected)

    @property
    def suggested(self) -> int:
        return rating_from_key_points(len(self.selected), len(self.points))

    def summary(self) -> Text:
        """e.g. `2 of 4 covered: Hard`."""
        return Text.assemble(f"{len(self.selected)} of {len(self.points)} covered: ",
                             (RATING_NAMES[self.suggested], "bold"))
