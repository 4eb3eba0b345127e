"""A CodinGame Tic-Tac-Toe / Ultimate Tic-Tac-Toe bot, written the way
CodinGame's starter code reads its input, played unchanged by referee with
`--protocol codingame` (or `protocol = "codingame"` in a manifest).

Each turn CodinGame (and referee) sends:
    opponentRow opponentCol      (-1 -1 when you move first)
    validActionCount
    row col                      (validActionCount lines)
and reads one line `row col`; text after the two numbers is shown as your
message and otherwise ignored. Debug output goes to stderr.

This one plays a winning cell of a small board when it has one, else a
random valid action (seeded from REFEREE_SEED when referee gives it).
"""

import os
import random
import sys

random.seed(os.environ.get("REFEREE_SEED"))

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
mine = set()     # cells (row, col) I played
theirs = set()   # cells the opponent played


def wins_small_board(row, col):
    """Whether (row, col) completes a line of my cells on its 3x3 board."""
    top, left = row - row % 3, col - col % 3
    cell = lambda i: (top + i // 3, left + i % 3)
    for line in LINES:
        cells = [cell(i) for i in line]
        if (row, col) in cells and all(c in mine or c == (row, col) for c in cells):
            return True
    return False


while True:
    opponent_row, opponent_col = [int(i) for i in input().split()]
    if opponent_row >= 0:
        theirs.add((opponent_row, opponent_col))
    valid_action_count = int(input())
    actions = []
    for i in range(valid_action_count):
        row, col = [int(j) for j in input().split()]
        actions.append((row, col))
    winning = [a for a in actions if wins_small_board(*a)]
    row, col = winning[0] if winning else random.choice(actions)
    mine.add((row, col))
    print("valid actions:", valid_action_count, file=sys.stderr, flush=True)
    print(row, col, flush=True)
