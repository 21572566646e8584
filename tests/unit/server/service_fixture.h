// The gRPC service on a real loopback server (port 0) over a coordinator on a fresh SQLite file,
// with a fake clock (and a plugin store when asked), and a stub that calls it.
#pragma once

#include <memory>

#include "api/channel.h"
#include "fake_clock.h"
#include "fixtures.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kbench/v1/coordinator.grpc.pb.h"
#include "server/service/coordinator_service.h"
#include "server/store/plugin_store.h"
#include "server/store/sqlite_store.h"

namespace kbench::server::testing {

// Start() builds it; a test that needs plugins or a pool of another size says so.
class ServiceFixture : public ::testing::Test {
 protected:
  void Start(bool with_plugins = false, int handler_threads = CoordinatorService::kDefaultHandlerThreads) {
    auto store = SqliteStore::Open(TempDbPath());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    coordinator_ = std::make_unique<Coordinator>(CoordinatorConfig{}, store_.get(), &clock_);
    service_ = std::make_unique<CoordinatorService>(coordinator_.get(), &gate_, handler_threads);
    if (with_plugins) {
      auto plugins = PluginStore::Open(TempDbPath() + ".plugins", int64_t{64} << 20);
      ASSERT_TRUE(plugins.ok()) << plugins.status();
      plugins_ = *std::move(plugins);
      service_->set_plugin_store(plugins_.get());
    }
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.SetMaxReceiveMessageSize(api::kMaxMessageBytes);
    builder.SetMaxSendMessageSize(api::kMaxMessageBytes);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    options_.address = "127.0.0.1:" + std::to_string(port);
    stub_ = v1::Coordinator::NewStub(api::MakeChannel(options_));
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<PluginStore> plugins_;
  RequestGate gate_;
  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<grpc::Server> server_;
  api::ChannelOptions options_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// Started before each test, without plugins.
class CoordinatorServiceTest : public ServiceFixture {
 protected:
  void SetUp() override { Start(); }
};

}  // namespace kbench::server::testing
