// Async calls of kbench-load: each call is a gRPC callback-API call on one of a few channels, timed
// from issue to completion (the recorder), whose continuation then runs on the scheduler's thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "api/channel.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/bench/latency.h"
#include "server/bench/scheduler.h"

namespace kbench::load {

class Rpcs {
 public:
  // channels connections to address (each its own TCP connection); timeout: every call's deadline.
  Rpcs(const std::string& address, int channels, std::chrono::milliseconds timeout, Scheduler* scheduler,
       LatencyRecorder* recorder);

  int channels() const { return static_cast<int>(stubs_.size()); }
  // Calls still in flight; their continuations are dropped once the scheduler stops.
  int in_flight() const { return in_flight_.load(); }
  // A first attempt's wait in the queue, from its creation (the coordinator's clock, this machine's)
  // to its lease now: the row "job queue wait".
  void RecordQueueWait(int64_t created_unix_ms) {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
    const auto end = std::chrono::steady_clock::now();
    recorder_->Record("job queue wait", end - std::chrono::milliseconds(std::max<int64_t>(0, now_ms - created_unix_ms)),
                      end, grpc::Status::OK);
  }

  // Issues stub->async()->METHOD(ctx, &req, &resp, cb) through `start` on channel `channel` with
  // `token`; `done(status, resp)` runs on the scheduler thread when it completes.
  template <class Req, class Resp, class Start>
  void Call(const char* rpc, int channel, const std::string& token, Req req, Start start,
            std::function<void(const grpc::Status&, Resp&)> done) {
    struct Pending {
      std::unique_ptr<grpc::ClientContext> ctx;
      Req req;
      Resp resp;
      std::chrono::steady_clock::time_point start;
    };
    auto p = std::make_shared<Pending>();
    p->ctx = api::MakeContext(api::ChannelOptions{address_, token}, timeout_);
    p->req = std::move(req);
    ++in_flight_;
    v1::Coordinator::Stub* stub = stubs_[static_cast<size_t>(channel) % stubs_.size()].get();
    p->start = std::chrono::steady_clock::now();
    start(stub, p->ctx.get(), &p->req, &p->resp, [this, p, rpc, done = std::move(done)](grpc::Status s) {
      std::string name = rpc;
      auto end = std::chrono::steady_clock::now();
      // A long poll the coordinator held: its own time is the call's less the hold, kept apart from
      // the calls answered at once.
      if constexpr (std::is_same_v<Resp, v1::LeaseJobResponse>) {
        if (s.ok() && p->resp.held_ms() > 0) {
          name = "LeaseJob held";
          end -= std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(p->resp.held_ms()),
                                                              end - p->start);
        }
      }
      recorder_->Record(name, p->start, end, s);
      scheduler_->Post([p, s = std::move(s), done] { done(s, p->resp); });
      --in_flight_;
    });
  }

 private:
  std::string address_;
  std::chrono::milliseconds timeout_;
  Scheduler* scheduler_;
  LatencyRecorder* recorder_;
  std::vector<std::unique_ptr<v1::Coordinator::Stub>> stubs_;
  std::atomic<int> in_flight_{0};
};

}  // namespace kbench::load
