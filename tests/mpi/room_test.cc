// The room PT-Scotch is given, and how the nodes placed after it fill the parts.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "partition/mpi/periphery_fold.h"
#include "partition/mpi/scotch_strategy.h"

namespace tessera {
namespace {

TEST(Room, NothingPlacedAfterLeavesTheUsualImbalance) {
  EXPECT_DOUBLE_EQ(imbalance_with_room(1000, 0, 3), kScotchDefaultImbalance);
  EXPECT_DOUBLE_EQ(imbalance_with_room(1000, 500, 1), kScotchDefaultImbalance);  // one part: nothing to balance
  EXPECT_DOUBLE_EQ(imbalance_with_room(1000, 1000, 3), kScotchDefaultImbalance);  // nothing left to partition
}

TEST(Room, GrowthIsSpreadOverTheLevelsOfBisectionAndCappedAtHalf) {
  // 20% placed after: a part may grow by 1.25 x 1.03; two parts take it in one split, four in two.
  EXPECT_NEAR(imbalance_with_room(1000, 200, 2), 1.25 * 1.03 - 1, 1e-12);
  EXPECT_NEAR(imbalance_with_room(1000, 200, 4), std::sqrt(1.25 * 1.03) - 1, 1e-12);
  EXPECT_NEAR(imbalance_with_room(1000, 200, 3), std::sqrt(1.25 * 1.03) - 1, 1e-12);
  EXPECT_DOUBLE_EQ(imbalance_with_room(1000, 600, 2), 0.5);
  EXPECT_DOUBLE_EQ(imbalance_with_room(1000, 10, 4), kScotchDefaultImbalance);
}

TEST(Room, TheFillRaisesTheLightestPartsToOneLevel) {
  EXPECT_EQ(fill_level({10, 10, 10}, 30), 20);
  // A part above the others' share gets nothing; the other two share the rest evenly.
  EXPECT_EQ(fill_level({103, 103, 30}, 64), 94);
  EXPECT_EQ(fill_level({103, 30, 103}, 64), 94);
  EXPECT_EQ(fill_level({100, 30, 90}, 64), 92);  // 30 -> 90 takes 60, then 4 over two parts
  EXPECT_EQ(fill_level({5, 7}, 3), 8);            // rounded up, so the stretches cover the whole weight
  EXPECT_EQ(fill_level({5, 9}, 0), 5);
}

}  // namespace
}  // namespace tessera
