#!/usr/bin/env bash
# Gradescope runs this once, while it builds the autograder's image. It installs what run_autograder
# needs, each pinned to the version the zip was built with (`quizapp autograder gradescope @EXERCISE@`):
#
#   torch   @TORCH_VERSION@, a CPU build, from @TORCH_INDEX@
#   quizapp @QUIZAPP_VERSION@, from @WHEEL@ beside this script (so it need not be on PyPI)
#
# then grades the exercise's reference once, so that a broken install fails the build here instead
# of scoring every submission 0.
#
# Outside Gradescope (a test run), two things can be changed from the environment:
#   QUIZAPP_PYTHON   the Python to install into (default: python3); run_autograder then uses it too
#   PIP_*            pip's own settings, e.g. PIP_NO_INDEX=1 to install only from what that Python
#                    already has (no network)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${QUIZAPP_PYTHON:-python3}"
# The image is built for this alone, so pip may install into the system's Python (Ubuntu 24.04's
# refuses without PIP_BREAK_SYSTEM_PACKAGES), and as root.
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_BREAK_SYSTEM_PACKAGES=1

# Gradescope's base images may come without pip (its own examples install it first).
if [ -z "${QUIZAPP_PYTHON:-}" ] && ! python3 -m pip --version >/dev/null 2>&1 && command -v apt-get >/dev/null; then
    apt-get update && apt-get install -y python3 python3-pip
fi

"$python" -m pip install --progress-bar off "torch==@TORCH_VERSION@" --index-url "@TORCH_INDEX@"
# quizapp's other dependencies come from PyPI; torch is installed already, so the CPU build stays.
"$python" -m pip install --progress-bar off "$here/@WHEEL@"
# pip keeps a quizapp of the same version that is already there: put this very build in its place.
"$python" -m pip install --progress-bar off --no-deps --force-reinstall "$here/@WHEEL@"

# run_autograder grades with the Python that has quizapp now.
"$python" -c 'import sys; print(sys.executable)' > "$here/python-path"

"$python" -m quizapp.grading.gradescope --selfcheck --source "$here"
