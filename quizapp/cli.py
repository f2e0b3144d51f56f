"""The command line. Bare `quizapp` opens the TUI; every verb imports what it needs when it runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from quizapp import __version__


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="quizapp")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Learn, practise and prove ML training techniques: questions with spaced repetition,
    and coding exercises graded by what your training loop actually does.

    Run without a command to open the app.
    """
    if ctx.invoked_subcommand is None:
        from quizapp.tui_launch import launch

        ctx.exit(launch())


@cli.group()
def bank() -> None:
    """The question bank."""


@bank.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def bank_check(paths: tuple[Path, ...]) -> None:
    """Validate question files (default: the whole bank and your own packs).

    Prints every problem as `file:line: reason` and exits 1 if there is any.
    """
    from quizapp.commands.bank_check import check_bank

    sys.exit(check_bank(paths))


@cli.command("list")
def list_() -> None:
    """List question topics and exercises with your status."""
    from quizapp.commands.listing import list_exercises

    sys.exit(list_exercises())


@cli.command()
@click.option("--topic", metavar="SLUG", help="Only this topic (see `quizapp list`).")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="Questions in the session (a question rated Again comes back on top of these).")
@click.option("--new", "new", type=click.IntRange(min=0), metavar="N",
              help="At most N new questions in this session (default: what is left of your daily limit, "
                   "see `quizapp config new-per-day`).")
def review(topic: str | None, limit: int, new: int | None) -> None:
    """Study in the terminal: due cards first, then new questions.

    A question rated Again is asked again later in the session (up to 3 times), each answer saved
    as its own review. Type u at the next question's prompt to undo the last rating.
    """
    from quizapp.commands.review import review_session

    sys.exit(review_session(topic, limit, new))


@cli.command()
@click.option("--minutes", type=int, default=30, show_default=True, metavar="N",
              help="How long the interview lasts (3 to 180); from 5 minutes on it ends with a coding exercise.")
@click.option("--topic", "topics", multiple=True, metavar="SLUG",
              help="Only this topic; repeat for several (default: all, weighted to your weakest).")
def interview(minutes: int, topics: tuple[str, ...]) -> None:
    """A timed mock interview: questions across topics, then (from 5 minutes on) a coding exercise, and a report card."""
    from quizapp.commands.interview import run_interview

    sys.exit(run_interview(minutes, topics))


@cli.group()
def export() -> None:
    """Take the bank or your progress elsewhere."""


@export.command("anki")
@click.argument("file", type=click.Path(path_type=Path))
def export_anki(file: Path) -> None:
    """Write the question bank as an Anki deck FILE.apkg (one subdeck per topic)."""
    from quizapp.commands.export_anki import write_anki_deck

    sys.exit(write_anki_deck(file))


@export.command("json")
@click.argument("file", type=click.Path(path_type=Path))
def export_json(file: Path) -> None:
    """Write all your progress to FILE.json, for `quizapp import` on another machine."""
    from quizapp.commands.transfer import write_progress_json

    sys.exit(write_progress_json(file))


@cli.command("import")
@click.argument("file", type=click.Path(path_type=Path))
def import_(file: Path) -> None:
    """Merge progress exported with `quizapp export json`; importing a file twice changes nothing."""
    from quizapp.commands.transfer import merge_progress_json

    sys.exit(merge_progress_json(file))


@cli.command()
@click.option("--reset", is_flag=True, help="Forget fitted parameters and schedule with FSRS's defaults again.")
def optimize(reset: bool) -> None:
    """Fit the FSRS scheduler to your own review history; kept only if it predicts your recall better."""
    from quizapp.commands.optimize import optimize_schedule

    sys.exit(optimize_schedule(reset))


@cli.command()
@click.option("--flags", is_flag=True, help="List the questions you flagged (with your notes) and suspended.")
def stats(flags: bool) -> None:
    """Print your self-study progress."""
    from quizapp.commands.stats import show_flags, show_stats

    sys.exit(show_flags() if flags else show_stats())


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object: questions and exercises with their due times.")
def due(as_json: bool) -> None:
    """What is due now and next: questions (and those a failed check asked for) and exercises."""
    from quizapp.commands.due import show_due

    sys.exit(show_due(as_json))


@cli.command()
@click.argument("exercise_id", metavar="ID")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
def start(exercise_id: str, path: Path | None, force: bool) -> None:
    """Write the starter file of exercise ID to PATH (default ./ID.py)."""
    from quizapp.commands.exercises import start_exercise

    sys.exit(start_exercise(exercise_id, path, force))


@cli.group()
def exercises() -> None:
    """The coding exercises (for their authors)."""


_EXERCISES_ROOT = click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=None,
                               help="The exercises folder to use (default: the one quizapp ships).")


@exercises.command("check")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="Where the references, starters and buggy solutions run.")
@click.option("--no-buggy", is_flag=True, help="Leave out the buggy solutions of a source checkout (faster).")
@_EXERCISES_ROOT
def exercises_check(ids: tuple[str, ...], device: str, no_buggy: bool, root: Path | None) -> None:
    """Check every exercise (or the IDs given): its metadata and files, its reference passes, its
    starter fails cleanly; in a source checkout, each buggy solution holds its header and each check
    is failed by one. Exit 1 when one needs work."""
    from quizapp.commands.exercise_check import check_exercises

    sys.exit(check_exercises(ids, device, root, buggy=not no_buggy))


@exercises.command("new")
@click.argument("exercise_id", metavar="ID")
@click.option("--title", help="The exercise's title (else a placeholder to replace).")
@click.option("--topic", metavar="SLUG", help="A topic of the question bank (see `quizapp list`).")
@_EXERCISES_ROOT
def exercises_new(exercise_id: str, title: str | None, topic: str | None, root: Path | None) -> None:
    """Write a new exercise ID: its folder with every file it needs, and a buggy solution beside the
    tests, holding a small example that `quizapp exercises check ID` grades at once."""
    from quizapp.commands.exercise_new import new_exercise

    sys.exit(new_exercise(exercise_id, title, topic, root))


def _check_timeout(ctx, param, value: float) -> float:
    # A range type alone lets NaN through (every comparison with NaN is false): no timeout at all.
    if not (1 <= value <= 86400):
        raise click.BadParameter(f"{value} is not a number of seconds from 1 to 86400")
    return value


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--exercise", "exercise", metavar="ID", help="Which exercise FILE solves (default: its marker comment).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="auto: CUDA when available, else CPU.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object (schema 1).")
@click.option("--events", is_flag=True, help="Print JSON lines as checks finish, then the report.")
@click.option("--timeout", type=float, default=120.0, show_default=True, metavar="S", callback=_check_timeout,
              help="Wall-clock limit for the solution, in seconds (1 to 86400).")
def grade(file: Path, exercise: str | None, device: str, as_json: bool, events: bool, timeout: float) -> None:
    """Grade a solution FILE: run it in a child process and check what it does."""
    from quizapp.commands.grade import grade_file

    sys.exit(grade_file(file, exercise, device, as_json, events, timeout))


@cli.group()
def autograder() -> None:
    """Autograders for course platforms, built from an exercise."""


@autograder.command("gradescope")
@click.argument("exercise_id", metavar="ID")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=Path("autograder.zip"), show_default=True,
              help="Where the zip goes.")
@click.option("--points", type=float, metavar="TOTAL",
              help="The assignment's total, spread over the checks by their weights (default: 1 point a check, "
                   "or the weights the exercise gives).")
def autograder_gradescope(exercise_id: str, output: Path, points: float | None) -> None:
    """Build a Gradescope autograder zip for exercise ID.

    Upload it as the assignment's "zip file upload" autograder. It holds setup.sh (a CPU torch and
    this quizapp, pinned to the versions installed here), run_autograder, and the exercise's settings."""
    from quizapp.commands.autograder import build_gradescope

    sys.exit(build_gradescope(exercise_id, output, points))


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--exercise", "exercise", metavar="ID", help="Which exercise FILE solves (default: its marker comment).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="auto: CUDA when available, else CPU.")
@click.option("--json-lines", "json_lines", is_flag=True, help="Print one JSON object (schema 1) per grade, a line each.")
@click.option("--timeout", type=float, default=120.0, show_default=True, metavar="S", callback=_check_timeout,
              help="Wall-clock limit for each grade, in seconds (1 to 86400).")
def watch(file: Path, exercise: str | None, device: str, json_lines: bool, timeout: float) -> None:
    """Grade FILE, then again after every save, until Ctrl+C."""
    from quizapp.commands.watch import watch_file

    sys.exit(watch_file(file, exercise, device, json_lines, timeout))


@cli.command()
@click.argument("paths", nargs=-1, metavar="SUBMISSIONS", type=click.Path(path_type=Path))
@click.option("--exercise", "exercise", metavar="ID", help="The exercise every submission solves.")
@click.option("--jobs", type=click.IntRange(min=1, max=64), metavar="N",
              help="Grades at a time, each with a warm grader of its own (default: the number of cores).")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="Where each student's JSON goes (default: SUBMISSIONS-ID-results beside the folder).")
@click.option("--csv", "csv_file", type=click.Path(path_type=Path), metavar="FILE",
              help="The table of results (default: DIR/results.csv; with --merge, ./results.csv).")
@click.option("--regrade", is_flag=True, help="Grade every submission again, even those graded already.")
@click.option("--shard", metavar="I/N", help="Grade only the I-th of N parts (0 <= I < N), chosen by student name.")
@click.option("--merge", is_flag=True, help="Join the output folders of the shards given as arguments into one CSV.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="cpu", show_default=True,
              help="auto: CUDA when available, else CPU.")
@click.option("--timeout", type=float, default=120.0, show_default=True, metavar="S", callback=_check_timeout,
              help="Wall-clock limit for each submission, in seconds.")
def batch(paths: tuple[Path, ...], exercise: str | None, jobs: int | None, out: Path | None, csv_file: Path | None,
          regrade: bool, shard: str | None, merge: bool, device: str, timeout: float) -> None:
    """Grade a folder of submissions (a .py or a folder per student), or --merge the shards' results.

    Each submission is graded as `quizapp grade --json` grades it, in a sandbox that hides the other
    students' files; nothing goes into your own progress. A rerun skips what is graded already.
    """
    from quizapp.commands.batch import batch as run_batch
    from quizapp.commands.batch import merge_shards

    if merge:
        sys.exit(merge_shards(paths, csv_file))
    if len(paths) != 1:
        click.echo("quizapp batch: give one folder of submissions (or --merge DIR...)", err=True)
        sys.exit(2)
    sys.exit(run_batch(paths[0], exercise, jobs, out, csv_file, regrade, shard, device, timeout))


@cli.command()
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0, metavar="N",
              help="The port (default: a free one).")
@click.option("--host", default="127.0.0.1", show_default=True, metavar="H",
              help="The address to listen on; anything but loopback is reachable from other machines.")
@click.option("--max-sessions", type=click.IntRange(min=1, max=64), default=4, show_default=True, metavar="N",
              help="App sessions (browser tabs) at once.")
@click.option("--idle-minutes", type=click.FloatRange(min=0.05), default=30.0, show_default=True, metavar="M",
              help="End a tab's session after this long without input.")
@click.option("--no-browser", is_flag=True, help="Print the link only; do not open a browser.")
@click.option("--unix-socket", type=click.Path(), metavar="PATH", hidden=True,
              help="Listen on a Unix socket (for jupyter-server-proxy).")
@click.option("--behind-proxy", is_flag=True, hidden=True,
              help="An authenticating proxy is in front (JupyterHub): no token, relative addresses.")
def serve(port: int, host: str, max_sessions: int, idle_minutes: float, no_browser: bool, unix_socket: str | None,
          behind_proxy: bool) -> None:
    """The app in your browser: prints (and opens) a link with a secret for this launch."""
    from quizapp.commands.serve import serve as run_serve

    sys.exit(run_serve(port, host, max_sessions, idle_minutes, no_browser, unix_socket, behind_proxy))


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--exercise", "exercise", metavar="ID", help="Which exercise FILE solves (only amp_training is benched).")
@click.option("--device", type=click.Choice(["cuda", "cpu"]), default="cuda", show_default=True,
              help="cpu: a dry run on a tiny model, its figures labelled CPU figures.")
@click.option("--dtype", "dtypes", multiple=True, type=click.Choice(["float16", "bfloat16"]),
              help="A precision to bench; repeat for both (default: both).")
@click.option("--batch", type=click.IntRange(min=1), help="Rows per step (default: sized to the GPU's memory).")
@click.option("--width", type=click.IntRange(min=1), help="Features of every layer (default 4096; 64 on the CPU).")
@click.option("--depth", type=click.IntRange(min=1), help="Linear+GELU blocks (default 8; 2 on the CPU).")
@click.option("--time-cap", type=click.FloatRange(min=0.01, max=3600), metavar="S",
              help="Seconds of timed runs per configuration (default 15; 2 on the CPU).")
@click.option("--peak-tflops", type=click.FloatRange(min=0.001), metavar="T",
              help="The GPU's dense 16-bit peak, for a GPU the built-in table lacks.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Also write every figure to this JSON file.")
@click.option("--no-sandbox", is_flag=True, help="Run the loop without the grader's sandbox.")
def bench(file: Path, exercise: str | None, device: str, dtypes: tuple[str, ...], batch: int | None,
          width: int | None, depth: int | None, time_cap: float | None, peak_tflops: float | None,
          json_path: Path | None, no_sandbox: bool) -> None:
    """CUDA only: step time, memory and TFLOP/s of your train_with_amp loop against float32.

    Exits 2 without CUDA; `--device cpu` runs a labelled dry run instead."""
    from quizapp.commands.bench import bench_file

    options = ["--device", device, *(f"--dtype={d}" for d in dtypes)]
    for flag, value in (("--batch", batch), ("--width", width), ("--depth", depth), ("--time-cap", time_cap),
                        ("--peak-tflops", peak_tflops), ("--json", json_path)):
        if value is not None:
            options += [flag, str(value)]
    if no_sandbox:
        options.append("--no-sandbox")
    sys.exit(bench_file(file, exercise, options))


@cli.command()
@click.argument("exercise_id", metavar="ID")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--yes", is_flag=True, help="Do not ask before replacing the file.")
def reset(exercise_id: str, path: Path | None, yes: bool) -> None:
    """Put the starter file of exercise ID back at PATH (default ./ID.py); your progress is kept."""
    from quizapp.commands.reset import reset_exercise

    sys.exit(reset_exercise(exercise_id, path, yes))


@cli.command()
@click.argument("exercise_id", metavar="ID")
@click.argument("number", required=False, type=int)
def hint(exercise_id: str, number: int | None) -> None:
    """Show the next hint of exercise ID (or hint NUMBER; 0 is the statement)."""
    from quizapp.commands.exercises import show_hint

    sys.exit(show_hint(exercise_id, number))


@cli.command()
@click.argument("exercise_id", metavar="ID")
@click.option("--yes", is_flag=True, help="Show it even if you have not passed yet.")
def solution(exercise_id: str, yes: bool) -> None:
    """Print the reference solution of exercise ID."""
    from quizapp.commands.exercises import show_solution

    sys.exit(show_solution(exercise_id, yes))


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--topic", metavar="SLUG", help="Only this topic (see `quizapp list`).")
@click.option("--json", "as_json", is_flag=True, help='A JSON list of {"id", "topic", "type", "prompt"}.')
def search(query: tuple[str, ...], topic: str | None, as_json: bool) -> None:
    """Find questions whose prompt, choices, explanation or tags hold every word of QUERY; best first."""
    from quizapp.commands.search import search_questions

    sys.exit(search_questions(" ".join(query), topic, as_json))


@cli.command()
@click.argument("question_id", metavar="ID")
@click.option("--note", metavar="TEXT", help="Why you doubt it (kept with the flag).")
@click.option("--clear", is_flag=True, help="Take the flag (and its note) off.")
def flag(question_id: str, note: str | None, clear: bool) -> None:
    """Flag question ID as doubtful, with a note; `quizapp stats --flags` lists your flags."""
    from quizapp.commands.marks import mark_question

    if clear and note is not None:
        raise click.UsageError("--clear takes the flag and its note off; give --note without --clear")
    sys.exit(mark_question(question_id, flagged=not clear, note=note))


@cli.command()
@click.argument("question_id", metavar="ID")
def suspend(question_id: str) -> None:
    """Keep question ID out of every session, interview and due count until `quizapp unsuspend ID`."""
    from quizapp.commands.marks import mark_question

    sys.exit(mark_question(question_id, suspended=True))


@cli.command()
@click.argument("question_id", metavar="ID")
def unsuspend(question_id: str) -> None:
    """Study question ID again after `quizapp suspend ID`."""
    from quizapp.commands.marks import mark_question

    sys.exit(mark_question(question_id, suspended=False))


@cli.group()
def config() -> None:
    """Your study settings."""


# N is read by set_new_per_day, so that "abc" and "-3" get the same plain message (click would call
# "-3" an unknown option, and "abc" not a valid integer range).
@config.command("new-per-day", context_settings={"ignore_unknown_options": True})
@click.argument("number", metavar="N", required=False)
def config_new_per_day(number: str | None) -> None:
    """At most N new questions a day (default 20), counted per local day across sessions; without N,
    print the limit and what is left today."""
    from quizapp.commands.marks import set_new_per_day

    sys.exit(set_new_per_day(number))


def main() -> None:
    cli(prog_name="quizapp")
