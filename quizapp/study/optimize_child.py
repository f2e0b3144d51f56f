"""The optimizer's own process: fits FSRS parameters to a review log with fsrs's torch optimizer.

Run as `python -m quizapp.study.optimize_child`; reads {"reviews": [[card, iso_time, rating], ...]}
on stdin and prints {"parameters": [...]} on stdout. It lives apart so that only this process ever
imports torch; the app and the TUI stay light.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime


def fit(reviews: list) -> list[float]:
    from fsrs import Rating, ReviewLog
    from fsrs.optimizer import Optimizer

    logs = [ReviewLog(card_id=int(card), rating=Rating(int(rating)), review_datetime=datetime.fromisoformat(at),
                      review_duration=None) for card, at, rating in reviews]
    return [float(p) for p in Optimizer(logs).compute_optimal_parameters()]


def main() -> int:
    try:
        request = json.load(sys.stdin)
        parameters = fit(request["reviews"])
    except ImportError as exc:
        print(f"the FSRS optimizer needs torch, pandas and tqdm ({exc}); install them with: "
              f"pip install 'fsrs[optimizer]'", file=sys.stderr)
        return 3
    except (ValueError, KeyError, TypeError) as exc:
        print(f"bad review log: {exc}", file=sys.stderr)
        return 2
    json.dump({"parameters": parameters}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
