#include "store_backends.h"

#include "fixtures.h"
#include "postgres_fixture.h"
#include "absl/strings/str_replace.h"
#include "server/store/pg_schema.h"
#include "server/store/pg_util.h"
#include "server/store/postgres_store.h"
#include "server/store/sqlite_schema.h"
#include "server/store/sqlite_store.h"
#include "server/store/sqlite_util.h"
#include <sqlite3.h>

namespace kbench::server::testing {

StoreBackend SqliteBackend() {
  return StoreBackend{"sqlite", [] { return absl::StatusOr<std::string>(TempDbPath()); },
                      [](const std::string& path) -> absl::StatusOr<std::unique_ptr<Store>> {
                        auto s = SqliteStore::Open(path);
                        if (!s.ok()) return s.status();
                        return std::unique_ptr<Store>(*std::move(s));
                      },
                      [](const std::string& path, int version, const std::string& sql,
                         const std::string& blob) -> absl::Status {
                        sqlite3* db = nullptr;
                        if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
                          sqlite3_close(db);
                          return absl::InternalError("sqlite3_open failed");
                        }
                        absl::Status s = sqlite::MigrateTo(db, version);
                        if (s.ok()) {
                          sqlite::Statement q(db, sql);
                          q.BindBlob(1, blob);
                          s = q.Run();
                        }
                        sqlite3_close(db);
                        return s;
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
                      },
                      [](const std::string& uri, int version, const std::string& sql,
                         const std::string& blob) -> absl::Status {
                        auto c = pg::Connection::Open(uri);
                        if (!c.ok()) return c.status();
                        if (absl::Status s = pg::MigrateTo(**c, version); !s.ok()) return s;
                        return (*c)->Query(absl::StrReplaceAll(sql, {{"?1", "$1"}}), pg::Params().Bytes(blob)).status();
                      }};
}

}  // namespace kbench::server::testing
