/* A random bot for all three games, speaking referee's protocol v1.
 *
 * Build: cc -O2 -o bots/c/random_bot bots/c/random_bot.c
 * Run:   referee check tictactoe bots/c-random.toml
 *
 * It reads lines from stdin and answers each `turn <position>` line with one
 * random legal move, chosen from the turn line alone. Its random seed is the
 * game's: REFEREE_SEED, and the `seed=N` field of each begin line when it
 * plays many games in one process (`reuse`); a number as the first argument
 * overrides both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int LINES[8][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6},
                                {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}};

static unsigned long long rng_state;

static unsigned long long next_random(void) {
    /* xorshift64*: small, fast and good enough to pick moves. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Whether the 9 cells at `cells` hold three `mark` in a row. */
static int has_line(const char *cells, char mark) {
    for (int l = 0; l < 8; l++) {
        if (cells[LINES[l][0]] == mark && cells[LINES[l][1]] == mark &&
            cells[LINES[l][2]] == mark) {
            return 1;
        }
    }
    return 0;
}

/* Moves are written into `moves` as text, 8 bytes each; returns the count. */
static int tictactoe_moves(const char *pos, char moves[][8]) {
    int n = 0;
    for (int i = 0; i < 9 && pos[i]; i++) {
        if (pos[i] == '.') {
            snprintf(moves[n++], 8, "%d", i);
        }
    }
    return n;
}

static int notakto_moves(const char *pos, char moves[][8]) {
    int n = 0;
    for (int k = 0; k < 26; k++) {
        const char *board = pos + 10 * k;
        if (strlen(board) < 9) {
            break;
        }
        if (!has_line(board, 'X')) { /* dead boards take no more moves */
            for (int i = 0; i < 9; i++) {
                if (board[i] == '.') {
                    snprintf(moves[n++], 8, "%c%d", 'A' + k, i);
                }
            }
        }
        if (board[9] != '/') {
            break;
        }
    }
    return n;
}

static int uttt_moves(const char *pos, char moves[][8]) {
    /* <81 cells, board-major>/<forced 0-8 or 9>/<9 chars: '.' open> */
    if (strlen(pos) < 81 + 1 + 1 + 1 + 9) {
        return 0;
    }
    const char *cells = pos;
    int forced = pos[82] - '0';
    const char *won = pos + 84;
    int n = 0;
    for (int b = 0; b < 9; b++) {
        int open = won[b] == '.';
        int allowed = (forced >= 0 && forced < 9 && won[forced] == '.') ? b == forced : 1;
        if (!open || !allowed) {
            continue;
        }
        for (int c = 0; c < 9; c++) {
            if (cells[b * 9 + c] == '.') {
                snprintf(moves[n++], 8, "%d %d", b, c);
            }
        }
    }
    return n;
}

int main(int argc, char **argv) {
    static char line[4096];
    static char moves[256][8];
    char game[32] = "";
    const char *env_seed = getenv("REFEREE_SEED");
    int fixed = argc > 1;
    rng_state = fixed ? strtoull(argv[1], NULL, 10)
                : env_seed ? strtoull(env_seed, NULL, 10)
                           : (unsigned long long)getpid();
    rng_state = rng_state * 0x9E3779B97F4A7C15ULL + 1;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "begin ", 6) == 0) {
            sscanf(line + 6, "%31s", game);
            const char *seed = strstr(line, " seed=");
            if (seed && !fixed) {
                rng_state = strtoull(seed + 6, NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
            }
        } else if (strncmp(line, "turn ", 5) == 0) {
            const char *pos = line + 5;
            int n;
            if (strcmp(game, "uttt") == 0) {
                n = uttt_moves(pos, moves);
            } else if (strcmp(game, "notakto") == 0) {
                n = notakto_moves(pos, moves);
            } else {
                n = tictactoe_moves(pos, moves);
            }
            if (n == 0) {
                fprintf(stderr, "random_bot: no legal move in '%s'\n", pos);
                return 1;
            }
            printf("%s\n", moves[next_random() % (unsigned long long)n]);
            fflush(stdout);
        }
        /* `end`: stdin closes after the last game; until then more may come. */
    }
    return 0;
}
