// RequestGate: admission until closed, and draining that waits for admitted requests only.
#include "server/service/request_gate.h"

#include <optional>
#include <thread>

#include "gtest/gtest.h"

namespace kbench::server {
namespace {

TEST(RequestGate, DrainsAtOnceWhenIdleAndRefusesAfterClosing) {
  RequestGate gate;
  { EXPECT_TRUE(gate.Enter()); }
  EXPECT_TRUE(gate.CloseAndDrain(absl::ZeroDuration()));
  EXPECT_FALSE(gate.Enter());
}

TEST(RequestGate, TimesOutWhileARequestRuns) {
  RequestGate gate;
  RequestGate::Pass held = gate.Enter();
  ASSERT_TRUE(held);
  EXPECT_FALSE(gate.CloseAndDrain(absl::Milliseconds(1)));
}

TEST(RequestGate, DrainWaitsForTheRunningRequest) {
  RequestGate gate;
  std::optional<RequestGate::Pass> held(gate.Enter());
  std::thread request([&] {
    // Runs until the gate closes (seen as a refused admission), then finishes its request.
    while (gate.Enter()) {
    }
    held.reset();
  });
  EXPECT_TRUE(gate.CloseAndDrain(absl::Seconds(60)));
  request.join();
}

// The callback service moves a pass into the task that runs the call: the moved pass keeps its
// admission (or refusal) and leaves the gate once, when the task ends.
TEST(RequestGate, AMovedPassKeepsItsAdmissionAndLeavesOnce) {
  RequestGate gate;
  std::optional<RequestGate::Pass> moved;
  {
    RequestGate::Pass pass = gate.Enter();
    moved.emplace(std::move(pass));
  }  // The moved-from pass leaves nothing.
  ASSERT_TRUE(*moved);
  EXPECT_FALSE(gate.CloseAndDrain(absl::ZeroDuration()));  // Still in progress.
  RequestGate::Pass refused = gate.Enter();
  RequestGate::Pass refused_moved(std::move(refused));
  EXPECT_FALSE(refused_moved);
  moved.reset();
  EXPECT_TRUE(gate.CloseAndDrain(absl::ZeroDuration()));
}

}  // namespace
}  // namespace kbench::server
