#!/usr/bin/env bash
# The GPU programme in one command: on a CUDA machine, from a checkout of this repository,
#
#   env      what the machine is (env.json); installs what is missing (see "Installing" below)
#   bench    quizapp bench on the amp_training reference, float16 and bfloat16 against float32
#            (bench.txt: the table; bench.json: every figure)
#   grade    every exercise's and drill's reference, starter and buggy solutions graded with
#            --device cuda, and --device cpu beside them, each timed (grades.json)
#   tests    pytest on tests/cuda and on the CUDA-gated tests of tests/facts (tests.log), reading the
#            grades the grade step made instead of grading again
#   summary  SUMMARY.md: all of the above on one page (also rewritten after every step)
#
# Usage:  bash benchmarks/gpu/run.sh [--dry-run | --rehearse] [--only STEP,...] [--budget SECONDS]
#                                    [--max-files N] [--python PATH] [OUT_DIR]
#
# Everything goes under OUT_DIR, else $OUT, else a new temp folder: SUMMARY.md (also printed last, so
# the end of the console output is the summary), run.log, steps.jsonl, env.json, bench.txt,
# bench.json, grades.json, tests.log.
#
# --budget SECONDS (default 570, or $QUIZAPP_GPU_BUDGET_S): the whole run keeps within it. The steps'
#   own limits add up to more than that; the default keeps a full run under ten minutes. Each step
#   gets what is left, grading starts no grade it cannot finish, and a step that runs out of time is
#   recorded as such; `--only grade,tests` then finishes the grading in a run of its own.
# --max-files N (default 8, at least 2): the output folder is left with at most N files, for
#   collecting it where only a few files are wanted (a CI job's artifacts, say). A full run
#   writes 8. With a smaller N, the least needed of them go: in the order SUMMARY.md, run.log,
#   steps.jsonl, env.json, bench.json, grades.json, tests.log, bench.txt, those past the first N are
#   appended to run.log under a header of their own (tests.log and bench.txt are already there) and
#   removed, so nothing is lost. Files in OUT_DIR that this script did not write are counted, never
#   touched.
# --python PATH (default $PYTHON): the interpreter that runs every step. Without one, the first of
#   .venv/bin/python, python3 and python whose torch sees CUDA, else the first with torch at all;
#   a checkout without .venv should name its interpreter.
#
# --dry-run (for a machine without a GPU): says what each step would run and checks that its
# command exists and works as far as it can without CUDA (the bench and grade verbs answer, the
# matrix is found, the CUDA tests are collected, the summary is written). --rehearse adds a CPU
# rehearsal: the bench with --device cpu and four grades on the CPU, through the same scripts.
#
# Installing: a CUDA machine may have torch, pytest and most of what quizapp needs, but no network
# to a package index. What is missing is installed with pip into a folder of this run (from a
# wheelhouse if there is one: $QUIZAPP_WHEELHOUSE, .whl/ or benchmarks/gpu/wheels/; else from the
# index, where the network allows). quizapp itself does without platformdirs (quizapp/paths.py works
# out the same folders, and this script sets QUIZAPP_HOME anyway); the tests step needs it, since
# tests/conftest.py imports it. A machine whose torch has no CUDA gets the CUDA build the same way
# (index: https://download.pytorch.org/whl/$QUIZAPP_TORCH_CUDA, default cu128).
#
# Exit status: 0 every step passed; 1 a step failed (a test, a grade that crashed, the bench);
# 2 misuse, or no CUDA without --dry-run; 3 something needed is missing and could not be installed.

set -u -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
STEPS_ALL="env bench grade tests summary"

usage() { sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

DRY=0 REHEARSE=0 ONLY="" OUTDIR="" BUDGET="${QUIZAPP_GPU_BUDGET_S:-570}" MAX_FILES=8 PYTHON="${PYTHON:-}"
while (( $# )); do
    case "$1" in
        --dry-run) DRY=1 ;;
        --rehearse) DRY=1 REHEARSE=1 ;;
        --only) ONLY="${2:-}"; shift ;;
        --only=*) ONLY="${1#*=}" ;;
        --budget) BUDGET="${2:-}"; shift ;;
        --budget=*) BUDGET="${1#*=}" ;;
        --max-files) MAX_FILES="${2:-}"; shift ;;
        --max-files=*) MAX_FILES="${1#*=}" ;;
        --python) PYTHON="${2:-}"; shift ;;
        --python=*) PYTHON="${1#*=}" ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) OUTDIR="$1" ;;
    esac
    shift
done
[[ "$BUDGET" =~ ^[0-9]+$ ]] || { echo "run.sh: --budget takes whole seconds" >&2; exit 2; }
# 2 at least: the summary and the log are what a reader needs first, and the log is where the rest goes
[[ "$MAX_FILES" =~ ^[0-9]+$ ]] && (( MAX_FILES >= 2 )) || { echo "run.sh: --max-files takes a whole number, 2 or more" >&2; exit 2; }
if [[ -n "$PYTHON" ]] && ! [[ -x "$PYTHON" ]] && ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "run.sh: no python at $PYTHON (--python or \$PYTHON)" >&2; exit 2
fi
for s in ${ONLY//,/ }; do
    [[ " $STEPS_ALL " == *" $s "* ]] || { echo "run.sh: no step '$s' (steps: $STEPS_ALL)" >&2; exit 2; }
done

OUTDIR="${OUTDIR:-${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/quizapp-gpu.XXXXXX")}}"
mkdir -p "$OUTDIR" && OUTDIR="$(cd "$OUTDIR" && pwd)" || { echo "run.sh: cannot write $OUTDIR" >&2; exit 2; }
LOG="$OUTDIR/run.log" STEPS="$OUTDIR/steps.jsonl"
: > "$LOG"; : > "$STEPS"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/quizapp-gpu-work.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
START=$(date +%s)
DEADLINE=$(( START + BUDGET ))
FAILED=0

export QUIZAPP_HOME="$WORK/home"        # a fresh store: the programme never touches a learner's
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
[[ $DRY == 1 ]] && export QUIZAPP_GPU_DRY_RUN=1
cd "$ROOT"

log() { printf '%s\n' "$*" | tee -a "$LOG"; }
wanted() { [[ -z "$ONLY" || ",$ONLY," == *",$1,"* ]]; }
json_str() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/ }; printf '"%s"' "$s"; }
record() {  # step status rc seconds limit command note
    printf '{"step": %s, "status": %s, "rc": %s, "seconds": %s, "limit": %s, "command": %s, "note": %s}\n' \
        "$(json_str "$1")" "$(json_str "$2")" "${3:-null}" "${4:-0}" "${5:-0}" "$(json_str "$6")" \
        "$(json_str "${7:-}")" >> "$STEPS"
}
left() { echo $(( DEADLINE - $(date +%s) )); }
limit_for() { local cap=$1 l; l=$(( $(left) - 20 )); (( l < cap )) && echo "$l" || echo "$cap"; }
summary() { [[ -n "${PY:-}" ]] && "$PY" "$HERE/summarize.py" "$OUTDIR" >/dev/null 2>>"$LOG"; }

# run_step NAME CAP OUTFILE CMD...: CMD with a time limit of CAP seconds or what the budget has left,
# its output appended to run.log (its stdout also to OUTFILE when given); the outcome to steps.jsonl.
run_step() {
    local name=$1 cap=$2 outfile=$3; shift 3
    local limit; limit=$(limit_for "$cap")
    if (( limit < 15 )); then
        log "== $name: not run, the budget of ${BUDGET}s is spent"
        record "$name" "out of time" null 0 0 "$*" "not started: $(left)s of the budget left"
        FAILED=1; return 1
    fi
    log "== $name (limit ${limit}s): $*"
    local t0=$SECONDS rc
    if [[ -n "$outfile" ]]; then  # its stdout to OUTFILE (and the log), its stderr to the log
        timeout -k 15 "$limit" "$@" 2>>"$LOG" | tee -a "$LOG" > "$outfile"; rc=${PIPESTATUS[0]}
    else
        timeout -k 15 "$limit" "$@" 2>&1 | tee -a "$LOG"; rc=${PIPESTATUS[0]}
    fi
    local status=ok note=""
    if (( rc == 124 || rc == 137 )); then status="timed out" note="stopped at its limit of ${limit}s"; FAILED=1
    elif (( rc != 0 )); then status=failed note="exit status $rc"; FAILED=1; fi
    log "== $name: $status in $(( SECONDS - t0 ))s${note:+ ($note)}"
    record "$name" "$status" "$rc" $(( SECONDS - t0 )) "$limit" "$*" "$note"
    summary
    return "$rc"
}

# dry_step NAME CAP WHAT CHECK...: says what the step would run, and runs CHECK (which must succeed).
dry_step() {
    local name=$1 cap=$2 what=$3; shift 3
    log "== $name (dry run): would run, within ${cap}s: $what"
    local t0=$SECONDS rc out
    out="$("$@" 2>&1)"; rc=$?
    printf '%s\n' "$out" | tail -n 40 | sed 's/^/   | /' | tee -a "$LOG"
    if (( rc == 0 )); then log "== $name: checked ($*)"; else log "== $name: CHECK FAILED (exit $rc): $*"; FAILED=1; fi
    record "$name" "$( (( rc == 0 )) && echo dry || echo 'dry check failed')" "$rc" $(( SECONDS - t0 )) "$cap" \
        "$what" "checked: $*"
    return "$rc"
}

# -- the Python to use ------------------------------------------------------------------------------

probe() { "$1" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")' 2>/dev/null; }
pick_python() {
    # A python the caller named is used as it is: picking another behind their back would test the wrong one.
    [[ -n "$PYTHON" ]] && { echo "$PYTHON"; return; }
    local c kind first_torch="" first_any=""
    for c in "$ROOT/.venv/bin/python" python3 python; do
        [[ -x "$c" ]] || command -v "$c" >/dev/null 2>&1 || continue
        first_any=${first_any:-$c}
        kind=$(probe "$c")
        [[ "$kind" == cuda ]] && { echo "$c"; return; }
        [[ "$kind" == cpu ]] && first_torch=${first_torch:-$c}
    done
    echo "${first_torch:-$first_any}"
}

WHEELHOUSE=""
for d in ${QUIZAPP_WHEELHOUSE:-} "$ROOT/.whl" "$HERE/wheels"; do
    compgen -G "$d/*.whl" >/dev/null 2>&1 && { WHEELHOUSE=$d; break; }
done
SITE="$WORK/site"
ONLINE=""
online() {  # can pip reach an index? (asked once: offline, pip's retries would spend minutes of the budget)
    if [[ -z "$ONLINE" ]]; then
        local host="${QUIZAPP_PIP_INDEX:-https://pypi.org/simple}"; host=${host#*://}; host=${host%%/*}
        if timeout 8 "$PY" -c "import socket,sys; socket.create_connection(('${host%%:*}', 443), 5)" 2>/dev/null
        then ONLINE=yes; else ONLINE=no; fi
    fi
    [[ "$ONLINE" == yes ]]
}
pip_install() {  # DIST...: into $SITE, from the wheelhouse, else the index (or the one QUIZAPP_PIP_INDEX names)
    mkdir -p "$SITE"
    if [[ -n "$WHEELHOUSE" ]] && "$PY" -m pip install -q --no-index --find-links "$WHEELHOUSE" --target "$SITE" \
        --no-deps "$@" >>"$LOG" 2>&1; then return 0; fi
    online || { log "env: no wheelhouse holds $* and no package index can be reached"; return 1; }
    timeout 600 "$PY" -m pip install -q --disable-pip-version-check --retries 1 --timeout 20 --target "$SITE" \
        ${QUIZAPP_PIP_INDEX:+--index-url "$QUIZAPP_PIP_INDEX"} "$@" >>"$LOG" 2>&1
}

log "quizapp GPU programme: $(date -u +%Y-%m-%dT%H:%M:%SZ), repository $ROOT, output $OUTDIR, budget ${BUDGET}s$( (( DRY )) && echo ', DRY RUN')"
PY="$(pick_python)"
[[ -n "$PY" ]] || { log "run.sh: no python here"; record env failed 3 0 0 "pick python" "no python"; exit 3; }
log "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])' 2>&1))"

# -- env: what the machine is, and what is missing ---------------------------------------------------

INSTALLED=""
ENV_JSON="$OUTDIR/env.json"
from_env() { "$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$ENV_JSON" 2>/dev/null; }
missing_dists() { from_env '" ".join(m.split()[0] for m in d["missing"])'; }
has_cuda() { [[ "$(from_env 'd.get("cuda_available")')" == True ]]; }

# A first look (env.json), the installs it calls for, then the env step proper (env.json again).
"$PY" "$HERE/env.py" --out "$ENV_JSON" >>"$LOG" 2>&1
if [[ $DRY == 0 ]] && ! has_cuda && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    log "env: this python's torch has no CUDA but the machine has a GPU: installing torch (${QUIZAPP_TORCH_CUDA:-cu128})"
    if [[ -n "$WHEELHOUSE" ]] && pip_install torch; then :; else
        QUIZAPP_PIP_INDEX="${QUIZAPP_PIP_INDEX:-https://download.pytorch.org/whl/${QUIZAPP_TORCH_CUDA:-cu128}}" pip_install torch
    fi && INSTALLED="torch" && export PYTHONPATH="$SITE:$PYTHONPATH"
fi
for dist in $(missing_dists); do
    [[ "$dist" == torch ]] && continue
    if [[ $DRY == 1 ]]; then log "env: missing $dist: a real run would install it"; continue; fi
    pip_install "$dist" && INSTALLED="$INSTALLED $dist" && export PYTHONPATH="$SITE:$PYTHONPATH"
done
export QUIZAPP_GPU_INSTALLED="${INSTALLED# }"
[[ -n "$INSTALLED" ]] && log "env: installed:$INSTALLED"
if wanted env || [[ -n "$INSTALLED" ]]; then
    run_step env 60 "" "$PY" "$HERE/env.py" --out "$ENV_JSON"
fi
if [[ $DRY == 0 && -n "$(missing_dists)" ]]; then
    log "run.sh: still missing: $(missing_dists); put their wheels in a wheelhouse (QUIZAPP_WHEELHOUSE) and run again"
    summary; exit 3
fi
if [[ $DRY == 0 ]] && ! has_cuda; then
    log "run.sh: CUDA is not available to $PY (torch $(from_env 'd.get("torch")'), its CUDA $(from_env 'd.get("torch_cuda")'))."
    log "         This programme measures a GPU; on a machine without one, run it with --dry-run."
    record cuda failed 2 0 0 "torch.cuda.is_available()" "no CUDA"
    summary; exit 2
fi
WORKERS="${QUIZAPP_GRADE_WORKERS:-$(( $(nproc) * 3 / 4 ))}"
(( WORKERS < 2 )) && WORKERS=2
(( WORKERS > 12 )) && WORKERS=12
REFERENCE="exercises/amp_training/reference.py"

# -- bench ---------------------------------------------------------------------------------------------

if wanted bench; then
    BENCH=("$PY" -m quizapp bench "$REFERENCE" --dtype float16 --dtype bfloat16 --time-cap 10
           --json "$OUTDIR/bench.json")
    if [[ $DRY == 0 ]]; then
        run_step bench 180 "$OUTDIR/bench.txt" "${BENCH[@]}"
    elif [[ $REHEARSE == 1 ]]; then
        run_step bench 180 "$OUTDIR/bench.txt" "$PY" -m quizapp bench "$REFERENCE" --device cpu --time-cap 0.2 \
            --json "$OUTDIR/bench.json"
    else
        dry_step bench 180 "${BENCH[*]}" "$PY" -m quizapp bench --help
    fi
fi

# -- grade ---------------------------------------------------------------------------------------------

if wanted grade; then
    GRADE=("$PY" "$HERE/grade_all.py" --out "$OUTDIR/grades.json" --workers "$WORKERS")
    if [[ $DRY == 0 ]]; then
        cap=360; limit=$(limit_for $cap)
        # start no grade in the last 45 s: those in flight finish inside the step's limit
        run_step grade "$cap" "" "${GRADE[@]}" --budget-s $(( limit > 90 ? limit - 45 : limit / 2 ))
    elif [[ $REHEARSE == 1 ]]; then
        run_step grade 180 "" "$PY" "$HERE/grade_all.py" --out "$OUTDIR/grades.json" --devices cpu --limit 4
    else
        dry_step grade 360 "${GRADE[*]} --budget-s ..." \
            bash -c "\"$PY\" -m quizapp grade --help >/dev/null && \"$PY\" \"$HERE/grade_all.py\" --list"
    fi
fi

# -- tests ---------------------------------------------------------------------------------------------

if wanted tests; then
    TESTS=("$PY" -m pytest -p cuda_only tests/cuda tests/facts -q -rfEs --durations=15)
    # the grade step's results, when it ran (what it did not reach is skipped); else the tests grade
    if [[ -f "$OUTDIR/grades.json" ]]; then
        export QUIZAPP_CUDA_GRADES="$OUTDIR/grades.json" QUIZAPP_CUDA_GRADES_ONLY=1
    fi
    export PYTHONPATH="$HERE:$PYTHONPATH"  # the cuda_only plugin
    if [[ $DRY == 0 ]]; then
        run_step tests 240 "$OUTDIR/tests.log" "${TESTS[@]}"
    else
        dry_step tests 240 "${TESTS[*]}" "${TESTS[@]:0:7}" --collect-only -q
    fi
fi

# -- summary -------------------------------------------------------------------------------------------

t0=$SECONDS
if "$PY" "$HERE/summarize.py" "$OUTDIR" >>"$LOG" 2>&1; then
    record summary ok 0 $(( SECONDS - t0 )) 30 "summarize.py $OUTDIR" ""
    "$PY" "$HERE/summarize.py" "$OUTDIR" >/dev/null 2>&1  # once more, with its own step recorded
else
    record summary failed 1 $(( SECONDS - t0 )) 30 "summarize.py $OUTDIR" "see run.log"; FAILED=1
fi
# -- at most --max-files files ----------------------------------------------------------------------------

OUTPUTS="SUMMARY.md run.log steps.jsonl env.json bench.json grades.json tests.log bench.txt"  # most needed first
IN_LOG=" tests.log bench.txt "  # their steps teed them into run.log already
rm -f "$OUTDIR/grades.tmp"  # grade_all.py's half-written results, left only when its step was stopped mid-write
present=()
for f in $OUTPUTS; do [[ -f "$OUTDIR/$f" ]] && present+=("$f"); done
others=$(( $(find "$OUTDIR" -mindepth 1 -maxdepth 1 | wc -l) - ${#present[@]} ))
room=$(( MAX_FILES - others > 2 ? MAX_FILES - others : 2 ))
for f in "${present[@]:room}"; do
    if [[ "$IN_LOG" == *" $f "* ]]; then
        log "== $f left out (--max-files $MAX_FILES): its text is in run.log already"
    else
        log "== $f folded into run.log (--max-files $MAX_FILES)"
        { printf '\n---- %s (folded in by --max-files %s) ----\n' "$f" "$MAX_FILES"; cat "$OUTDIR/$f"; } >> "$LOG"
    fi
    rm -f "$OUTDIR/$f"
done
total=$(find "$OUTDIR" -mindepth 1 -maxdepth 1 | wc -l)
(( total > MAX_FILES )) && log "run.sh: $OUTDIR holds $total files, more than --max-files $MAX_FILES:" \
    "$others of them were there before this run and are left alone"

log ""
log "---- $OUTDIR/SUMMARY.md ----"
tee -a "$LOG" < "$OUTDIR/SUMMARY.md"
log "run.sh: done in $(( $(date +%s) - START ))s; everything is in $OUTDIR ($(ls "$OUTDIR" | tr '\n' ' '))"
exit $(( FAILED ? 1 : 0 ))
