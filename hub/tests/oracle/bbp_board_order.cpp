// The board order BBP Pairings publishes, for every round a TRF file pairs: the oracle of
// hub/tests/trf_board_order.rs. It is BBP's own code doing the work: the file read by its
// TRF reader (fileformats::trf::readFile), the scores before each round counted by its
// Tournament::getPoints as its checker counts them (tournament/checker.cpp), and each
// round's pairs (byes included) put in order by swisssystems::sortResults, the function
// it orders its published pairings with.
//
// Built by the test against BBP's source (../shared/tools/bbpPairings):
//   g++ -std=c++20 -I SRC bbp_board_order.cpp SRC/fileformats/trf.cpp … -o board-order
// Prints one line per board: `ROUND BOARD WHITE BLACK` (start ranks; BLACK 0 for a bye).

#include <fstream>
#include <iostream>
#include <list>
#include <vector>

#include <fileformats/trf.h>
#include <swisssystems/common.h>
#include <tournament/tournament.h>

int main(int argc, char **argv)
{
  if (argc != 2)
  {
    std::cerr << "usage: board-order FILE.trf" << std::endl;
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  tournament::Tournament tournament = fileformats::trf::readFile(file, false);
  const tournament::Tournament original = tournament;
  for (tournament::Player &player : tournament.players)
  {
    player.scoreWithoutAcceleration = 0;
  }
  for (tournament::round_index round = 0; round < original.playedRounds; ++round)
  {
    std::list<swisssystems::Pairing> pairs;
    for (const tournament::Player &player : original.players)
    {
      if (!player.isValid || player.matches.size() <= round)
      {
        continue;
      }
      const tournament::Match &match = player.matches[round];
      if (!match.participatedInPairing)
      {
        continue;
      }
      if (match.opponent == player.id)
      {
        pairs.emplace_back(player.id, player.id);
      }
      else if (player.id < match.opponent)
      {
        pairs.emplace_back(player.id, match.opponent, match.color);
      }
    }
    swisssystems::sortResults(pairs, tournament);
    unsigned board = 0;
    for (const swisssystems::Pairing &pair : pairs)
    {
      std::cout << round + 1u << ' ' << ++board << ' ' << pair.white + 1u << ' '
        << (pair.white == pair.black ? 0u : pair.black + 1u) << '\n';
    }
    for (tournament::Player &player : tournament.players)
    {
      if (player.isValid && player.matches.size() > round)
      {
        player.scoreWithoutAcceleration +=
          original.getPoints(player, original.players[player.id].matches[round]);
      }
    }
  }
  return 0;
}
