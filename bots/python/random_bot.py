#!/usr/bin/env python3
"""A random bot for all three games, speaking referee's protocol v1.

Standard library only. Copy it and replace choose() with something clever.
Protocol (docs/protocol.md):
    referee -> bot   begin <game> <seat> <time_ms> [seed=N]
    referee -> bot   turn <position>      (answer with one move line)
    referee -> bot   end <win|loss|draw>  (then stdin closes, or the next
                                           game's begin comes: `reuse`)
The move is chosen from the turn line alone: one process may be sent turn
lines from different games.

Seeds make games reproducible: the bot seeds its generator from the game's
seed, which referee passes in REFEREE_SEED (every process) and, to bots that
declare `reuse`, in each begin line's seed=N field (a first argument, if
given, overrides both).
"""
import os
import random
import sys

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def has_line(cells, mark):
    return any(all(cells[i] == mark for i in line) for line in LINES)


def tictactoe_moves(pos):
    """pos: 9 chars X/O/. row-major; a move is the cell digit."""
    return [str(i) for i, c in enumerate(pos) if c == "."]


def notakto_moves(pos):
    """pos: boards joined by '/', 9 chars X/. each; a move is letter + cell."""
    moves = []
    for k, board in enumerate(pos.split("/")):
        if has_line(board, "X"):
            continue  # a dead board takes no more moves
        letter = chr(ord("A") + k)
        moves += [letter + str(i) for i, c in enumerate(board) if c == "."]
    return moves


def uttt_moves(pos):
    """pos: <81 cells, board-major>/<forced 0-8 or 9>/<9 chars: . open, X O = closed>."""
    cells, forced, won = pos.split("/")
    forced = int(forced)
    if forced != 9 and won[forced] == ".":
        boards = [forced]
    else:
        boards = [b for b in range(9) if won[b] == "."]
    return ["%d %d" % (b, c) for b in boards for c in range(9) if cells[b * 9 + c] == "."]


MOVES = {"tictactoe": tictactoe_moves, "notakto": notakto_moves, "uttt": uttt_moves}


def guess_game(pos):
    if "/" not in pos:
        return "tictactoe"
    return "uttt" if len(pos.split("/")[0]) == 81 else "notakto"


def choose(moves, rng):
    return rng.choice(moves)


def main():
    fixed = sys.argv[1] if len(sys.argv) > 1 else None
    first = fixed if fixed is not None else os.environ.get("REFEREE_SEED")
    rng = random.Random(int(first) if first and first.isdigit() else first)
    game = None
    for line in sys.stdin:
        words = line.split(None, 1)
        if not words:
            continue
        if words[0] == "begin":
            fields = words[1].split()
            game = fields[0]
            for field in fields[3:]:
                key, _, value = field.partition("=")
                if key == "seed" and fixed is None:
                    rng.seed(int(value))
        elif words[0] == "turn":
            pos = words[1].strip()
            moves = MOVES.get(game or guess_game(pos), MOVES[guess_game(pos)])(pos)
            print(choose(moves, rng), flush=True)
        elif words[0] == "end":
            continue  # stdin closes after the last game; until then, more may come


if __name__ == "__main__":
    main()
