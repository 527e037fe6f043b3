// A client of the gRPC admin service, for `gantry explain` and `gantry whatif`.
// Plaintext to loopback addresses; TLS elsewhere unless `insecure` is set.
#ifndef GANTRY_SRC_ADMIN_CLIENT_H_
#define GANTRY_SRC_ADMIN_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gantry/admin/v1/admin.grpc.pb.h"

namespace gantry::admin {

struct ClientOptions {
  std::string address;        // host:port
  std::string tls_ca_file;    // server CA (default: the system roots)
  std::string tls_cert_file;  // client certificate (mutual TLS)
  std::string tls_key_file;
  bool insecure = false;  // plaintext to a non-loopback address
  bool tls = false;       // TLS even to a loopback address
  int64_t timeout_millis = 120'000;
};

class AdminClient {
 public:
  static absl::StatusOr<std::unique_ptr<AdminClient>> Connect(const ClientOptions& options);

  absl::StatusOr<v1::ExplainResponse> Explain(const v1::ExplainRequest& request);
  absl::StatusOr<v1::WhatIfResponse> WhatIf(const v1::WhatIfRequest& request);

 private:
  AdminClient(std::unique_ptr<v1::Admin::Stub> stub, std::string address, int64_t timeout_millis)
      : stub_(std::move(stub)), address_(std::move(address)), timeout_millis_(timeout_millis) {}
  // One unary call with the deadline; gRPC errors keep their code.
  template <typename Req, typename Resp, typename Call>
  absl::StatusOr<Resp> Unary(const Req& request, Call call);
  std::unique_ptr<v1::Admin::Stub> stub_;
  std::string address_;
  int64_t timeout_millis_;
};

}  // namespace gantry::admin

#endif  // GANTRY_SRC_ADMIN_CLIENT_H_
