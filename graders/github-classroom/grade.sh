#!/usr/bin/env bash
# GitHub Classroom's grading step: grades the student's repository with
# referee and appends `result=BASE64` (the autograding result the reporter
# reads) to $GITHUB_OUTPUT (graders/github-classroom/README.md). The
# workflow runs it from the repository's root.
#
# Settings (environment, all optional):
#   REFEREE     the referee binary (default: referee beside this script)
#   RUBRIC      the rubric (default: rubrics/notakto-assignment.toml beside it)
#   GRADE       the game and its options (default: the Notakto assignment,
#               "notakto --boards 3 --seat 1 --time-ms 1000")
#   GAMES       games per seat (default: referee's)
#   SUBMISSION  the student's folder (default: the current folder)
#   SANDBOX     referee's sandbox: best-effort (the default), on, or off
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
REFEREE="${REFEREE:-$HERE/referee}"
RUBRIC="${RUBRIC:-$HERE/rubrics/notakto-assignment.toml}"
GRADE="${GRADE:-notakto --boards 3 --seat 1 --time-ms 1000}"
GAMES="${GAMES:-}"
SUBMISSION="${SUBMISSION:-.}"
SANDBOX="${SANDBOX:-best-effort}"

case "$SANDBOX" in
    off) sandbox_flag=--no-sandbox ;;
    *) sandbox_flag="--sandbox=$SANDBOX" ;;
esac

# With GITHUB_OUTPUT set, referee appends the result to it; the report
# goes to the step's log. The step always succeeds: the reporter turns the
# result into the grade (and fails the workflow when the bot fails).
# shellcheck disable=SC2086 # GRADE is words on purpose
"$REFEREE" grade $GRADE ${GAMES:+--games "$GAMES"} "$sandbox_flag" \
    --rubric "$RUBRIC" --github-classroom "$SUBMISSION"
status=$?
if [ "$status" -gt 2 ] && [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "referee exited with status $status: no result" >&2
fi
exit 0
