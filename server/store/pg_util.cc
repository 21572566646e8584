// Implementation of the libpq helpers.
#include "server/store/pg_util.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kbench::server::pg {
namespace {

// Type oids of the built-in types used here (catalog/pg_type.h, stable across versions).
constexpr unsigned int kBool = 16;
constexpr unsigned int kBytea = 17;
constexpr unsigned int kInt8 = 20;
constexpr unsigned int kInt2 = 21;
constexpr unsigned int kInt4 = 23;
constexpr unsigned int kText = 25;
constexpr unsigned int kFloat4 = 700;
constexpr unsigned int kFloat8 = 701;
constexpr unsigned int kTextArray = 1009;

// The low `bytes` bytes of v in network order (8: int8 and float8 parameters; 4: the binary array
// format's header and lengths).
std::string BigEndian(uint64_t v, int bytes = 8) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

uint64_t ReadBigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

Params& Params::Add(unsigned int type, std::string value, bool null) {
  values_.push_back(std::move(value));
  types_.push_back(type);
  nulls_.push_back(null);
  return *this;
}

Params& Params::Int(int64_t v) { return Add(kInt8, BigEndian(static_cast<uint64_t>(v)), false); }

Params& Params::Double(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return Add(kFloat8, BigEndian(bits), false);
}

Params& Params::Text(absl::string_view v) { return Add(kText, std::string(v), false); }
Params& Params::Bytes(absl::string_view v) { return Add(kBytea, std::string(v), false); }
Params& Params::TextArray(const std::vector<std::string>& v) {
  // Binary array format (array_recv): dimensions, has-nulls flag, element type, then per dimension its
  // length and lower bound, then each element as its length and bytes. No dimension when empty.
  std::string out = BigEndian(v.empty() ? 0 : 1, 4) + BigEndian(0, 4) + BigEndian(kText, 4);
  if (!v.empty()) out += BigEndian(v.size(), 4) + BigEndian(1, 4);
  for (const std::string& e : v) out += BigEndian(e.size(), 4) + e;
  return Add(kTextArray, std::move(out), false);
}
Params& Params::NullText() { return Add(kText, "", true); }
Params& Params::NullDouble() { return Add(kFloat8, "", true); }
Params& Params::NullBytes() { return Add(kBytea, "", true); }

Rows& Rows::operator=(Rows&& o) noexcept {
  if (this != &o) {
    PQclear(r_);
    r_ = o.r_;
    o.r_ = nullptr;
  }
  return *this;
}

Rows::~Rows() { PQclear(r_); }

int Rows::size() const { return r_ == nullptr ? 0 : PQntuples(r_); }

bool Rows::IsNull(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }

int64_t Rows::Int(int row, int col) const {
  if (IsNull(row, col)) return 0;
  const char* p = PQgetvalue(r_, row, col);
  switch (PQftype(r_, col)) {
    case kBool: return p[0] != 0;
    case kInt2: return static_cast<int16_t>(ReadBigEndian(p, 2));
    case kInt4: return static_cast<int32_t>(ReadBigEndian(p, 4));
    case kInt8: return static_cast<int64_t>(ReadBigEndian(p, 8));
    default: return 0;
  }
}

double Rows::Double(int row, int col) const {
  if (IsNull(row, col)) return 0;
  const char* p = PQgetvalue(r_, row, col);
  switch (PQftype(r_, col)) {
    case kFloat8: {
      const uint64_t bits = ReadBigEndian(p, 8);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case kFloat4: {
      const uint32_t bits = static_cast<uint32_t>(ReadBigEndian(p, 4));
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    default: return static_cast<double>(Int(row, col));
  }
}

std::string Rows::Text(int row, int col) const {
  if (IsNull(row, col)) return std::string();
  return std::string(PQgetvalue(r_, row, col), PQgetlength(r_, row, col));
}

int64_t Rows::Affected() const {
  const char* n = PQcmdTuples(r_);
  return (n == nullptr || *n == '\0') ? 0 : std::strtoll(n, nullptr, 10);
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = absl::StrCat("postgres: cannot connect: ", PQerrorMessage(conn));
    PQfinish(conn);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    return absl::UnavailableError(msg);
  }
  std::unique_ptr<Connection> c(new Connection(conn));
  // Warnings (NOTICE) would go to stderr; the store reports through statuses.
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  return c;
}

Connection::~Connection() { PQfinish(conn_); }

bool Connection::EnsureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK) return true;
  PQreset(conn_);
  prepared_.clear();
  return PQstatus(conn_) == CONNECTION_OK;
}

absl::Status Connection::ErrorOf(const PGresult* r, absl::string_view what) const {
  const char* state = r == nullptr ? nullptr : PQresultErrorField(r, PG_DIAG_SQLSTATE);
  std::string msg = absl::StrCat("postgres: ", what, ": ",
                                 r != nullptr ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  const std::string sqlstate = state == nullptr ? "" : state;
  if (sqlstate == "23505") return absl::AlreadyExistsError(msg);                      // unique_violation
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::AbortedError(msg);     // serialization, deadlock
  if (PQstatus(conn_) != CONNECTION_OK || sqlstate.rfind("08", 0) == 0 || sqlstate.rfind("57P", 0) == 0)
    return absl::UnavailableError(msg);
  return absl::InternalError(msg);
}

absl::Status Connection::Exec(const std::string& sql) {
  Rows r(PQexec(conn_, sql.c_str()));
  const ExecStatusType st = r.get() == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r.get());
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return absl::OkStatus();
  return ErrorOf(r.get(), sql.substr(0, 80));
}

absl::StatusOr<Rows> Connection::Query(const std::string& sql, const Params& params) {
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = absl::StrCat("kb", prepared_.size());
    Rows r(PQprepare(conn_, name.c_str(), sql.c_str(), params.size(), params.types_.data()));
    if (r.get() == nullptr || PQresultStatus(r.get()) != PGRES_COMMAND_OK)
      return ErrorOf(r.get(), absl::StrCat("prepare ", sql));
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  std::vector<int> formats(params.size(), 1);
  for (int i = 0; i < params.size(); ++i) {
    values[i] = params.nulls_[i] ? nullptr : params.values_[i].data();
    lengths[i] = static_cast<int>(params.values_[i].size());
  }
  Rows r(PQexecPrepared(conn_, it->second.c_str(), params.size(), values.data(), lengths.data(), formats.data(),
                        /*resultFormat=*/1));
  const ExecStatusType st = r.get() == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r.get());
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  return ErrorOf(r.get(), sql);
}

absl::StatusOr<std::unique_ptr<Pool>> Pool::Open(const std::string& conninfo, int size) {
  auto pool = std::make_unique<Pool>();
  for (int i = 0; i < std::max(1, size); ++i) {
    absl::StatusOr<std::unique_ptr<Connection>> c = Connection::Open(conninfo);
    if (!c.ok()) return c.status();
    absl::MutexLock lock(&pool->mu_);
    pool->free_.push_back(*std::move(c));
  }
  return pool;
}

Pool::Handle Pool::Acquire() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::vector<std::unique_ptr<Connection>>* free) { return !free->empty(); }, &free_));
  std::unique_ptr<Connection> c = std::move(free_.back());
  free_.pop_back();
  return Handle(this, std::move(c));
}

void Pool::Return(std::unique_ptr<Connection> c) {
  absl::MutexLock lock(&mu_);
  free_.push_back(std::move(c));
}

}  // namespace kbench::server::pg
