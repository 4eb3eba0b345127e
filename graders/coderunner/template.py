# A Moodle CodeRunner combinator template grader that grades the student's
# answer with referee (graders/coderunner/README.md). CodeRunner puts the
# answer where {{ STUDENT_ANSWER }} is, runs this program on the Jobe
# server, and reads its output: one JSON object (fraction, testresults,
# epiloguehtml).
#
# The settings below may also come from the environment (to try the
# template outside CodeRunner).
import html
import json
import os
import subprocess
import tempfile

# The referee binary: a support file of the question (copied into the
# working folder), or a path on the Jobe server.
REFEREE = os.environ.get("REFEREE", "./referee")
# The rubric: a support file, or a path on the Jobe server.
RUBRIC = os.environ.get("RUBRIC", "notakto-assignment.toml")
# The game and its options.
GRADE = os.environ.get("GRADE", "notakto --boards 3 --seat 1 --time-ms 1000")
# Games per seat: few enough for the question's time limit.
GAMES = os.environ.get("GAMES", "20")
# The answer's file name (any .py name for the assignment's console
# program; bot.py for a protocol bot).
FILE = os.environ.get("FILE", "bot.py")
# Jobe already isolates the run; referee's own sandbox needs user
# namespaces, which Jobe does not give: off.
SANDBOX = os.environ.get("SANDBOX", "off")

STUDENT_ANSWER = """{{ STUDENT_ANSWER | e('py') }}"""


def grade():
    if os.path.exists(REFEREE) and not os.access(REFEREE, os.X_OK):
        os.chmod(REFEREE, 0o755)  # support files lose their x bit
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, FILE), "w") as f:
            f.write(STUDENT_ANSWER)
        sandbox = "--no-sandbox" if SANDBOX == "off" else "--sandbox=" + SANDBOX
        command = [REFEREE, "grade"] + GRADE.split() + ["--games", GAMES, sandbox,
                   "--rubric", RUBRIC, "--coderunner", folder]
        try:
            run = subprocess.run(command, capture_output=True, text=True)
        except OSError as e:
            return failed("cannot run referee: %s" % e)
        lines = run.stdout.strip().splitlines()
        try:
            return json.loads(lines[-1])  # referee's result is its last line
        except (IndexError, ValueError):
            return failed("referee exited with status %d:\n%s" % (run.returncode, run.stderr))


def failed(why):
    return {"fraction": 0.0,
            "epiloguehtml": "<p>The grader failed; please tell the course staff.</p><pre>%s</pre>"
                            % html.escape(why)}


print(json.dumps(grade()))
