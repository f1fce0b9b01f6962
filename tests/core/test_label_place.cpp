// Chart labels without overlaps (app/core/label_place.h): the Roofline view's trail of steps.
#include "app/core/label_place.h"

#include <doctest/doctest.h>

using namespace tilescope::core;

TEST_CASE("labels of points at one spot take the four corners, none over another") {
  // Five steps at the same intensity (a tile size that changes nothing at DRAM): 80 x 16 labels
  // around (400, 300) in a 1000 x 600 chart. Four corners at ring 0, the fifth a line further.
  const std::vector<LabelWish> wishes(5, LabelWish{400, 300, 80, 16});
  const auto spots = place_labels(wishes, {}, Rect{0, 0, 1000, 600}, 8);
  REQUIRE(spots.size() == 5);
  for (const auto& s : spots) REQUIRE(s);
  for (size_t a = 0; a < spots.size(); ++a)
    for (size_t b = a + 1; b < spots.size(); ++b) CHECK_FALSE(rects_overlap(*spots[a], *spots[b]));
  // The first (the current step) gets the first choice: right of and below its point.
  CHECK(spots[0]->x == doctest::Approx(408));
  CHECK(spots[0]->y == doctest::Approx(300 + 8 * 0.6));
  // The second goes left: x = 400 - 8 - 80.
  CHECK(spots[1]->x == doctest::Approx(312));
}

TEST_CASE("labels stay inside the chart, off obstacles, and are left out when there is no room") {
  // A point at the chart's right edge: the right-hand spots are outside, so it goes left.
  const auto edge = place_labels({LabelWish{995, 300, 80, 16}}, {}, Rect{0, 0, 1000, 600}, 8);
  REQUIRE(edge[0]);
  CHECK(edge[0]->x + edge[0]->w <= 1000);
  // An obstacle (the peak's label) over the first choice: the next corner is taken instead.
  const Rect peak{400, 300, 200, 30};
  const auto off = place_labels({LabelWish{400, 300, 80, 16}}, {peak}, Rect{0, 0, 1000, 600}, 8);
  REQUIRE(off[0]);
  CHECK_FALSE(rects_overlap(*off[0], peak));
  // A chart 100 x 40 has room for four 40 x 16 labels around its middle (one per corner, no
  // ring further out fits): the other two are left out rather than drawn over the four.
  const std::vector<LabelWish> many(6, LabelWish{50, 20, 40, 16});
  const auto spots = place_labels(many, {}, Rect{0, 0, 100, 40}, 4);
  int placed = 0;
  for (const auto& s : spots) placed += s.has_value();
  CHECK(placed == 4);
}
