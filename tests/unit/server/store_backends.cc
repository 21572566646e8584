#include "store_backends.h"

#include "fixtures.h"
#include "postgres_fixture.h"
#include "server/store/postgres_store.h"
#include "server/store/sqlite_store.h"

namespace kbench::server::testing {

StoreBackend SqliteBackend() {
  return StoreBackend{"sqlite", [] { return absl::StatusOr<std::string>(TempDbPath()); },
                      [](const std::string& path) -> absl::StatusOr<std::unique_ptr<Store>> {
                        auto s = SqliteStore::Open(path);
                        if (!s.ok()) return s.status();
                        return std::unique_ptr<Store>(*std::move(s));
                      }};
}

StoreBackend PostgresBackend(int pool_size) {
  return StoreBackend{"postgres",
                      []() -> absl::StatusOr<std::string> {
                        absl::StatusOr<PostgresServer*> server = SharedPostgres();
                        if (!server.ok()) return server.status();
                        return (*server)->CreateDatabase();
                      },
                      [pool_size](const std::string& uri) -> absl::StatusOr<std::unique_ptr<Store>> {
                        auto s = PostgresStore::Open(uri, pool_size);
                        if (!s.ok()) return s.status();
                        return std::unique_ptr<Store>(*std::move(s));
                      }};
}

}  // namespace kbench::server::testing
