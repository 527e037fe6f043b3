// Text rendering of Explain and WhatIf responses for the CLI: a table of
// nodes grouped by reason, then the best candidates with their scores.
#ifndef GANTRY_SRC_ADMIN_RENDER_H_
#define GANTRY_SRC_ADMIN_RENDER_H_

#include <string>

#include "absl/status/statusor.h"
#include "gantry/admin/v1/admin.pb.h"

namespace gantry::admin {

std::string RenderExplain(const v1::ExplainResponse& response);
std::string RenderWhatIf(const v1::WhatIfResponse& response);
// The response as JSON (proto3 JSON mapping, fields in proto order).
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

}  // namespace gantry::admin

#endif  // GANTRY_SRC_ADMIN_RENDER_H_
