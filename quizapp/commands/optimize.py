"""`quizapp optimize`: fit the FSRS scheduler to the learner's review history."""

from __future__ import annotations

import click

from quizapp.commands.common import fail, open_store
from quizapp.words import plural


def optimize_schedule(reset: bool) -> int:
    from quizapp.study.fitting import FitError, optimize, require_enough_history, review_log

    store = open_store()
    if store is None:
        return 1
    with store:
        if reset:
            had = store.fsrs_parameters() is not None
            store.set_fsrs_parameters(None)
            click.echo("Back to FSRS's default parameters." if had else "Already on FSRS's default parameters.")
            click.echo("Cards keep their due dates; each is scheduled with the defaults from its next review on.")
            return 0
        reviews = review_log(store)
        try:
            usable = require_enough_history(reviews)
            click.echo(f"Fitting FSRS to your {plural(len(reviews), 'review')} ({usable} usable); "
                       f"this runs torch in a separate process and can take a few minutes...")
            result = optimize(store)
        except FitError as exc:
            return fail(str(exc))
    click.echo(f"Log loss on your reviews (lower predicts your recall better), over {plural(result.usable, 'review')}:")
    click.echo(f"  FSRS defaults    {result.default_loss:.4f}")
    if result.current_loss != result.default_loss:
        click.echo(f"  in use until now {result.current_loss:.4f}")
    click.echo(f"  fitted to you    {result.fitted_loss:.4f}")
    if result.kept:
        click.echo("Kept: your reviews are scheduled with the fitted parameters from now on, "
                   "and every card was rescheduled from its history with them.")
        click.echo("  " + " ".join(f"{p:.4f}" for p in result.fitted))
    else:
        click.echo("Not kept: the fitted parameters predict your recall no better than the ones in use, "
                   "so nothing changed. Try again after more reviews.")
    return 0
