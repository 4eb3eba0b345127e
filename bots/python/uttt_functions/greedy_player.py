"""A bot function in the UTTT bot competition's style: wins a local board when
it can, blocks the opponent's local win, and avoids sending the opponent to
a free choice. The player number is found by counting pieces."""
import random

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def wins_with(cells, j, p):
    return any(j in line and all(cells[k] == p or k == j for k in line) for line in LINES)


def greedy_player(board, T, won):
    ones = sum(row.count(1) for row in board)
    twos = sum(row.count(2) for row in board)
    me = 1 if ones == twos else 2
    them = 3 - me
    boards = [T] if T != 9 and won[T] == 0 else [i for i in range(9) if won[i] == 0]
    moves = [(i, j) for i in boards for j in range(9) if board[i][j] == 0]
    for tier in (me, them):
        hits = [(i, j) for i, j in moves if wins_with(board[i], j, tier)]
        if hits:
            return random.choice(hits)
    # Do not send the opponent to a closed board (a free choice for them).
    calm = [(i, j) for i, j in moves if won[j] == 0 and j != i]
    return random.choice(calm or moves)
