// SHA-256 against the FIPS 180-4 example vectors, fed whole and in odd pieces.
#include "api/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace kbench::api {
namespace {

std::string Hex(const std::string& s) {
  Sha256 h;
  h.Update(s);
  return h.HexDigest();
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesHashLikeTheWhole) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data.push_back(static_cast<char>(i * 131 % 251));
  Sha256 h;
  size_t at = 0;
  for (size_t piece = 1; at < data.size(); piece = piece * 3 % 97 + 1) {
    const size_t n = std::min(piece, data.size() - at);
    h.Update(data.data() + at, n);
    at += n;
  }
  EXPECT_EQ(h.HexDigest(), Hex(data));
}

}  // namespace
}  // namespace kbench::api
