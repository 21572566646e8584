// The channels of kbench-load: distinct channel arguments keep gRPC from sharing one connection.
#include "server/bench/rpc.h"

#include <algorithm>

namespace kbench::load {

Rpcs::Rpcs(const std::string& address, int channels, std::chrono::milliseconds timeout, Scheduler* scheduler,
           LatencyRecorder* recorder)
    : address_(address), timeout_(timeout), scheduler_(scheduler), recorder_(recorder) {
  const api::ChannelOptions options{address, ""};
  for (int i = 0; i < std::max(1, channels); ++i) {
    grpc::ChannelArguments args = api::MakeChannelArguments(options);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("kbench.load.channel", i);
    stubs_.push_back(v1::Coordinator::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args)));
  }
}

}  // namespace kbench::load
