"""Plots (textual-plotext): a check's curves against the reference, and study activity per day."""

from __future__ import annotations

from datetime import date

from textual_plotext import PlotextPlot

from quizapp.grading.render import finite_number, x_label

# Fixed colours per series name keep "yours" and "reference" recognisable from plot to plot.
SERIES_COLOURS = {"yours": "cyan", "reference": "orange", "float32": "gray"}


class CurvePlot(PlotextPlot):
    """Curves from a check's data: {"title": ..., "series": {name: [floats]}}."""

    DEFAULT_CSS = "CurvePlot { height: 14; min-height: 8; }"

    def show_curves(self, curves: dict) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title(str(curves.get("title", "")))
        start = 0 if curves.get("x") == "step" else 1  # steps count from 0, epochs from 1 (as in the CLI's plot)
        longest = 1
        for name, values in curves.get("series", {}).items():
            # A NaN or inf point is left out where it is: the points after it keep their own x.
            points = [(start + i, float(v)) for i, v in enumerate(values) if finite_number(v)]
            if points:
                plt.plot([x for x, _ in points], [y for _, y in points], label=str(name), marker="braille",
                         color=SERIES_COLOURS.get(name, "green"))
                longest = max(longest, len(values))
        plt.xticks(range(start, start + longest, max(1, longest // 10)))  # steps or epochs: whole numbers
        # As the CLI's plot: the axes named, and a series with nothing to draw named on the x axis
        # (plotext leaves it out of the legend).
        plt.xlabel(x_label(curves))
        if curves.get("y"):
            plt.ylabel(str(curves["y"]))
        self.refresh()


class DailyChart(PlotextPlot):
    """One value per day over a span of days: bars for counts, a line for rates (None: no data that day)."""

    DEFAULT_CSS = "DailyChart { height: 1fr; min-height: 8; }"

    def show_days(self, title: str, days: list[date], values: dict[date, float], *, kind: str = "bar",
                  ylim: tuple[float, float] | None = None) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title(title)
        # Day positions, not date strings: plotext would parse strings as dates in its own format.
        points = [(i, values[d]) for i, d in enumerate(days) if d in values]
        if points:
            xs, ys = zip(*points)
            if kind == "bar":
                plt.bar(xs, ys, color="cyan", width=0.6)
                top = max(1, int(max(ys)))
                plt.yticks(range(0, top + 1, max(1, top // 4)))  # counts: whole numbers only
            else:
                plt.plot(xs, ys, color="cyan", marker="●")
        step = max(1, len(days) // 7)
        ticks = list(range(len(days) - 1, -1, -step))[::-1]  # always label today
        plt.xticks(ticks, [days[i].strftime("%m-%d") for i in ticks])
        plt.xlim(-0.5, len(days) - 0.5)
        if ylim:
            plt.ylim(*ylim)
            plt.yticks([ylim[0] + (ylim[1] - ylim[0]) * i / 4 for i in range(5)])
        self.refresh()
