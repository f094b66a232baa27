// The strategy Tessera writes out must stay PT-Scotch's own SPEED strategy at the usual imbalance: a Scotch update
// that changes SCOTCH_stratDgraphMapBuild shows here, not as a slower or worse partitioning.
#include <gtest/gtest.h>
#include <ptscotch.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "partition/mpi/scotch_strategy.h"

namespace tessera {
namespace {

// The strategy as PT-Scotch writes it back, which normalises spacing and parameter order.
std::string saved(SCOTCH_Strat* strategy) {
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  EXPECT_EQ(SCOTCH_stratSave(strategy, out), 0);
  std::fclose(out);
  std::string result(text, size);
  std::free(text);
  return result;
}

std::string parsed(const std::string& text) {
  SCOTCH_Strat strategy;
  SCOTCH_stratInit(&strategy);
  EXPECT_EQ(SCOTCH_stratDgraphMap(&strategy, text.c_str()), 0) << text;
  std::string result = saved(&strategy);
  SCOTCH_stratExit(&strategy);
  return result;
}

TEST(ScotchStrategy, AtTheUsualImbalanceItIsScotchsOwnSpeedStrategy) {
  for (int ranks : {1, 2, 3, 4, 8, 16, 64})
    for (int parts : {2, 3, ranks}) {
      SCOTCH_Strat built;
      SCOTCH_stratInit(&built);
      ASSERT_EQ(SCOTCH_stratDgraphMapBuild(&built, SCOTCH_STRATSPEED, ranks, parts, kScotchDefaultImbalance), 0);
      EXPECT_EQ(parsed(dgraph_map_strategy(ranks, kScotchDefaultImbalance)), saved(&built))
          << ranks << " ranks, " << parts << " parts";
      SCOTCH_stratExit(&built);
    }
}

TEST(ScotchStrategy, WithRoomTheBandFmFollowsTheImbalanceAndOnlySmallBandsGetIt) {
  const std::string text = parsed(dgraph_map_strategy(3, 0.45));
  EXPECT_NE(text.find("bal=0.15"), std::string::npos) << text;
  EXPECT_NE(text.find("(vert)<(" + std::to_string(kBandFmLimit) + ")"), std::string::npos) << text;
  EXPECT_EQ(text.find("bal=0.01"), std::string::npos) << text;
  EXPECT_EQ(text.find("bal=0.03"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera
