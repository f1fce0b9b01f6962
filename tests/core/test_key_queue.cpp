// The key event queue (key_queue.h): a tap inside one slow frame is down for one frame and up the
// next, events keep their order, and keys that do not interfere are fed in the same frame.
#include "app/core/key_queue.h"

#include <doctest/doctest.h>

#include <vector>

using namespace tilescope::core;

namespace {

constexpr int kLeft = 263, kCtrl = 341, kZ = 90, kA = 65;

KeyEvent press(int key) {
  return {key, 0, 0, true};
}
KeyEvent release(int key) {
  return {key, 0, 0, false};
}

// The frames a queue needs to drain, each as the list of (key, down) it fed.
std::vector<std::vector<KeyEvent>> drain(KeyEventQueue& q) {
  std::vector<std::vector<KeyEvent>> frames;
  while (!q.empty()) frames.push_back(q.take_frame());
  return frames;
}

}  // namespace

TEST_CASE("a press and release inside one frame are fed over two frames") {
  KeyEventQueue q;
  q.push(press(kLeft));
  q.push(release(kLeft));
  const auto frames = drain(q);
  REQUIRE(frames.size() == 2);
  REQUIRE(frames[0].size() == 1);
  CHECK(frames[0][0].key == kLeft);
  CHECK(frames[0][0].down);
  REQUIRE(frames[1].size() == 1);
  CHECK_FALSE(frames[1][0].down);
  CHECK_FALSE(q.is_down(kLeft));
}

TEST_CASE("three taps of one key between two frames are three presses, one frame each") {
  // Hand count: every tap needs a frame down and a frame up, so 3 taps take 6 frames, and the
  // frames alternate down, up.
  KeyEventQueue q;
  for (int i = 0; i < 3; ++i) {
    q.push(press(kLeft));
    q.push(release(kLeft));
  }
  const auto frames = drain(q);
  REQUIRE(frames.size() == 6);
  for (size_t f = 0; f < frames.size(); ++f) {
    REQUIRE(frames[f].size() == 1);
    CHECK(frames[f][0].down == (f % 2 == 0));
  }
}

TEST_CASE("a chord is fed together, and what follows it waits its turn") {
  // Ctrl down, Z tapped, Ctrl up, then A tapped: Ctrl+Z must be seen in one frame; A's press may
  // not jump ahead of Z's release (order kept), so A comes after.
  KeyEventQueue q;
  q.push(press(kCtrl));
  q.push(press(kZ));
  q.push(release(kZ));
  q.push(release(kCtrl));
  q.push(press(kA));
  q.push(release(kA));
  const auto frames = drain(q);
  REQUIRE(frames.size() == 3);
  REQUIRE(frames[0].size() == 2);  // Ctrl and Z down
  CHECK(frames[0][0].key == kCtrl);
  CHECK(frames[0][1].key == kZ);
  REQUIRE(frames[1].size() == 3);  // Z up, Ctrl up, A down
  CHECK(frames[1][0].key == kZ);
  CHECK_FALSE(frames[1][0].down);
  CHECK(frames[1][2].key == kA);
  CHECK(frames[1][2].down);
  REQUIRE(frames[2].size() == 1);  // A up
  CHECK_FALSE(frames[2][0].down);
}

TEST_CASE("a repeated press of a key already down is passed on without taking a frame") {
  KeyEventQueue q;
  q.push(press(kLeft));
  q.push(press(kLeft));  // no transition: the key is down already
  q.push(release(kLeft));
  const auto frames = drain(q);
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].size() == 2);
  CHECK(frames[1].size() == 1);
}

TEST_CASE("an empty queue feeds nothing") {
  KeyEventQueue q;
  CHECK(q.take_frame().empty());
  CHECK(q.empty());
}
