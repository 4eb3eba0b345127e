// A CodinGame Tic-Tac-Toe / Ultimate Tic-Tac-Toe bot, written the way
// CodinGame's C++ starter code reads its input, played unchanged by referee
// with `--protocol codingame` (or `protocol = "codingame"` in a manifest).
//
// Each turn: `opponentRow opponentCol` (-1 -1 when moving first), then
// `validActionCount`, then that many `row col` lines. The reply is one line
// `row col`. Debug output goes to stderr.
//
// This one plays the valid action nearest the centre of its small board
// (centre, then corners, then sides), the first such in CodinGame's order.
//
// Build: c++ -O2 -o bots/codingame/starter bots/codingame/starter.cpp

#include <iostream>
#include <vector>

using namespace std;

int main() {
    while (true) {
        int opponent_row, opponent_col;
        // referee ends the process after the game; stop at end of input too.
        if (!(cin >> opponent_row >> opponent_col)) return 0;
        cin.ignore();
        int valid_action_count;
        cin >> valid_action_count; cin.ignore();
        int best_row = -1, best_col = -1, best_rank = 99;
        for (int i = 0; i < valid_action_count; i++) {
            int row, col;
            cin >> row >> col; cin.ignore();
            int r = row % 3, c = col % 3;
            int rank = (r == 1 && c == 1) ? 0 : (r != 1 && c != 1) ? 1 : 2;
            if (rank < best_rank) {
                best_rank = rank;
                best_row = row;
                best_col = col;
            }
        }
        cerr << "opponent played " << opponent_row << " " << opponent_col << endl;
        cout << best_row << " " << best_col << endl;
    }
}
