#!/usr/bin/env python3
"""A tictactoe bot with the classic heuristic, speaking referee's protocol v1:
win if possible, else block the opponent's win, else take a corner, else the
centre, else a side. Standard library only.
"""
import sys

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def completing(cells, mark):
    """Empty cells that would give `mark` three in a row."""
    out = []
    for line in LINES:
        marks = [cells[i] for i in line]
        if marks.count(mark) == 2 and marks.count(".") == 1:
            out.append(line[marks.index(".")])
    return out


def choose(pos):
    me = "X" if pos.count("X") == pos.count("O") else "O"
    them = "O" if me == "X" else "X"
    for cells in (completing(pos, me), completing(pos, them)):
        if cells:
            return cells[0]
    for group in ((0, 2, 6, 8), (4,), (1, 3, 5, 7)):
        for cell in group:
            if pos[cell] == ".":
                return cell
    return None


def main():
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "turn":
            print(choose(words[1]), flush=True)
        elif words and words[0] == "end":
            continue  # with `reuse`, the next game's begin may follow


if __name__ == "__main__":
    main()
