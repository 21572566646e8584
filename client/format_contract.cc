#include "client/format_contract.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"

namespace kbench::client {

std::string FormatContract(const v1::OpInfo& op, bool json) {
  const v1::LaunchContract& c = op.contract();
  if (json) {
    std::string out;
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    (void)google::protobuf::util::MessageToJsonString(c, &out, options);
    return out;
  }
  std::string s = absl::StrCat("Launch contract of ", op.name(), " custom kernels\n\n");
  absl::StrAppend(&s, "  extern \"C\" __global__ void ", c.entry(), "(\n");
  for (int i = 0; i < c.params_size(); ++i) {
    const v1::ContractParam& p = c.params(i);
    std::string what;
    if (p.kind() == v1::ContractParam::DIM) {
      what = "dim";
    } else {
      what = absl::StrCat(p.kind() == v1::ContractParam::INPUT ? "input" : "output", " [",
                          absl::StrJoin(p.dims(), ", "), "]",
                          p.fixed_dtype() != v1::DTYPE_UNSPECIFIED ? absl::StrCat(" always ", api::DtypeName(p.fixed_dtype()))
                                                                   : "");
    }
    const std::string decl = absl::StrCat("      ", p.c_type(), " ", p.name(), i + 1 < c.params_size() ? "," : ")");
    absl::StrAppend(&s, decl, std::string(decl.size() < 44 ? 44 - decl.size() : 1, ' '), "// ", what, "\n");
  }
  absl::StrAppend(&s, "\n  dtypes:      ", absl::StrJoin(c.dtypes(), ", ", [](std::string* o, int d) {
                    o->append(api::DtypeName(static_cast<v1::Dtype>(d)));
                  }),
                  " (kbench_t)\n");
  absl::StrAppend(&s, "  block:       ", absl::StrJoin(c.default_block(), ", "), "   (--block X[,Y[,Z]])\n");
  absl::StrAppend(&s, "  grid:        ", absl::StrJoin(c.default_grid(), ", "), "   (--grid EXPR[,EXPR[,EXPR]])\n");
  absl::StrAppend(&s, "\nRules:\n", c.notes(), "\n\nStarting template (kbench-client kernels --op ", op.name(),
                  " --template > my_", op.name(), ".cu):\n\n", c.template_source());
  return s;
}

}  // namespace kbench::client
