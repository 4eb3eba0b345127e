"""A bot function in the UTTT bot competition's style: a random legal move."""
import random


def random_player(board, T, won):
    boards = [T] if T != 9 and won[T] == 0 else [i for i in range(9) if won[i] == 0]
    moves = [(i, j) for i in boards for j in range(9) if board[i][j] == 0]
    return random.choice(moves)
