#include "api/pem.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace kbench::api {

absl::StatusOr<std::string> ReadPemFile(const std::string& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read '", path, "': ", std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  std::string pem = text.str();
  if (pem.find("-----BEGIN ") == std::string::npos)
    return absl::InvalidArgumentError(absl::StrCat(what, ": '", path, "' is not a PEM file (no '-----BEGIN ' line)"));
  return pem;
}

}  // namespace kbench::api
