// Thin helpers over libpq: a connection that prepares each SQL text once and runs it with binary
// parameters and binary results, typed reads of result rows, a small connection pool, and errors as
// absl::Status (unique violations become ALREADY_EXISTS; deadlocks and serialization failures
// ABORTED, which callers retry; a lost server UNAVAILABLE).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <libpq-fe.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace kbench::server::pg {

// Positional parameters ($1, $2, ...) in order of the calls, all sent in binary.
class Params {
 public:
  Params& Int(int64_t v);
  Params& Double(double v);
  Params& Text(absl::string_view v);
  Params& Bytes(absl::string_view v);  // bytea
  Params& TextArray(const std::vector<std::string>& v);  // text[], one dimension
  Params& NullText();
  Params& NullDouble();
  Params& NullBytes();

  int size() const { return static_cast<int>(values_.size()); }

 private:
  friend class Connection;
  Params& Add(unsigned int type, std::string value, bool null);

  std::vector<std::string> values_;
  std::vector<unsigned int> types_;  // Oids.
  std::vector<bool> nulls_;
};

// The rows of a query, read by row and column (0-based) according to each column's type.
class Rows {
 public:
  explicit Rows(PGresult* r) : r_(r) {}
  Rows(Rows&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  Rows& operator=(Rows&& o) noexcept;
  ~Rows();
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;

  int size() const;
  bool IsNull(int row, int col) const;
  int64_t Int(int row, int col) const;     // int2, int4, int8, bool; 0 for NULL.
  double Double(int row, int col) const;   // float4, float8, integers; 0 for NULL.
  std::string Text(int row, int col) const;  // text, varchar, bytea: the raw bytes; "" for NULL.
  int64_t Affected() const;                  // Rows an INSERT/UPDATE/DELETE touched.
  const PGresult* get() const { return r_; }

 private:
  PGresult* r_;
};

class Connection {
 public:
  // Connects with a libpq connection string (URI "postgresql://..." or "key=value ...").
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& conninfo);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs SQL text without parameters (may hold several statements); for DDL and BEGIN/COMMIT.
  absl::Status Exec(const std::string& sql);
  // Runs one statement with parameters; prepared on this connection at first use.
  absl::StatusOr<Rows> Query(const std::string& sql, const Params& params = Params());

  // Whether the connection is usable; reconnects once when it is not (forgetting prepared statements).
  bool EnsureConnected();

 private:
  explicit Connection(PGconn* conn) : conn_(conn) {}
  absl::Status ErrorOf(const PGresult* r, absl::string_view what) const;

  PGconn* conn_;
  std::map<std::string, std::string> prepared_;  // SQL text -> statement name.
};

// A fixed number of connections handed out one caller at a time.
class Pool {
 public:
  static absl::StatusOr<std::unique_ptr<Pool>> Open(const std::string& conninfo, int size);

  // A connection lent for the lifetime of the handle.
  class Handle {
   public:
    Handle(Pool* pool, std::unique_ptr<Connection> c) : pool_(pool), c_(std::move(c)) {}
    Handle(Handle&&) = default;
    ~Handle() {
      if (c_ != nullptr) pool_->Return(std::move(c_));
    }
    Connection& operator*() { return *c_; }
    Connection* operator->() { return c_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> c_;
  };

  // Blocks until a connection is free.
  Handle Acquire();

 private:
  void Return(std::unique_ptr<Connection> c);

  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench::server::pg
