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

}  // namespace
}  // namespace kbench::server
