#!/usr/bin/env python3
"""Runs a bot function of the UTTT bot competition as a referee bot.

Usage: python3 uttt_function_bot.py <module.py> [--function NAME]

The module defines a function in the competition's style:

    def my_bot(board, T, won):
        ...
        return local_board, position

- board: 9 lists of 9 ints; board[i][j] is cell j of local board i (both
  numbered 0-8 row-major). 0 empty, 1 player 1, 2 player 2.
- T: the local board the player must play in (0-8), or 9 for a free move
  (the first move of the game, or when sent to a board that is closed).
- won: 9 ints; 0 open, 1 or 2 won by that player, 3 full without a winner.
- returns: two ints, the local board and the position in it.

Player numbers follow the competition: player 1 moves first and is 1 on
the board, player 2 is 2. A function finds its own number by counting the
pieces (equal counts: it is player 1), as the competition's example players
do; a function that takes a fourth parameter is also given it directly:
`def my_bot(board, T, won, player)`.

This adapter speaks referee's protocol v1 on stdin/stdout (docs/protocol.md).
An exception in the function ends the program with the traceback on stderr,
which referee records as a crash with the traceback in the stderr tail.
"""
import importlib.util
import inspect
import os
import sys


def load(path, name):
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(os.path.basename(path))[0], path)
    if spec is None or spec.loader is None:
        sys.exit("uttt_function_bot: cannot load " + path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    if name is None:
        candidates = [n for n, f in vars(module).items()
                      if inspect.isfunction(f) and f.__module__ == module.__name__
                      and len(inspect.signature(f).parameters) in (3, 4)
                      and not n.startswith("_")]
        if len(candidates) > 1:
            # Helpers with three parameters are common; the bot is the one
            # whose parameters read like the competition's (board, T, won).
            named = [n for n in candidates
                     if [p.lower() for p in inspect.signature(getattr(module, n)).parameters][1:3]
                     == ["t", "won"]]
            candidates = named or candidates
        if len(candidates) != 1:
            sys.exit("uttt_function_bot: %s defines %d candidate functions %s; "
                     "name one with --function" % (path, len(candidates), candidates))
        name = candidates[0]
    f = getattr(module, name, None)
    if not callable(f):
        sys.exit("uttt_function_bot: %s has no function %r" % (path, name))
    return f


CELL = {".": 0, "X": 1, "O": 2}
WON = {".": 0, "X": 1, "O": 2, "=": 3}


def parse(position):
    cells, forced, won = position.split("/")
    board = [[CELL[cells[i * 9 + j]] for j in range(9)] for i in range(9)]
    return board, int(forced), [WON[c] for c in won]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    name = None
    if "--function" in args:
        k = args.index("--function")
        if k + 1 >= len(args):
            sys.exit("uttt_function_bot: --function needs a name")
        name = args[k + 1]
        del args[k:k + 2]
    f = load(args[0], name)
    takes_player = len(inspect.signature(f).parameters) == 4
    seat = 1
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "begin":
            seat = int(words[2])
        elif words[0] == "turn":
            board, t, won = parse(words[1])
            if takes_player:
                move = f(board, t, won, seat)
            else:
                move = f(board, t, won)
            i, j = move
            print("%d %d" % (int(i), int(j)), flush=True)
        elif words[0] == "end":
            continue  # with `reuse`, the next game's begin may follow


if __name__ == "__main__":
    main()
