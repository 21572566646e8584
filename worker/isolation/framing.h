// Length-prefixed protobuf messages on file descriptors (4-byte little-endian length, then bytes):
// the worker <-> runner pipe protocol.
#pragma once

#include <chrono>

#include "absl/status/status.h"
#include "google/protobuf/message_lite.h"

namespace kbench::worker {

absl::Status WriteMessage(int fd, const google::protobuf::MessageLite& msg);

// Reads one message. DEADLINE_EXCEEDED when nothing complete arrives within `timeout`;
// UNAVAILABLE when the peer closed the pipe (it exited); DATA_LOSS for a malformed frame.
absl::Status ReadMessage(int fd, google::protobuf::MessageLite* msg,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds::max());

}  // namespace kbench::worker
