// SHA-256 (FIPS 180-4), incremental: kernel plugins are named by the hash of their bytes, computed
// while they stream (client upload, coordinator store, worker cache), never held whole in memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench::api {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(absl::string_view bytes) { Update(bytes.data(), bytes.size()); }
  // Lower-case hex of the digest; the object is spent afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The hex SHA-256 of a file, read in pieces; NOT_FOUND when it cannot be opened.
absl::StatusOr<std::string> Sha256OfFile(const std::string& path);

}  // namespace kbench::api
