#include "src/admin/client.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "gantry/util/strings.h"
#include "grpcpp/grpcpp.h"

namespace gantry::admin {
namespace {

absl::StatusOr<std::string> ReadFile(std::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(gantry::StrCat(flag, ": cannot read ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsLoopback(std::string_view address) {
  return address.starts_with("127.") || address.starts_with("localhost") ||
         address.starts_with("[::1]");
}

absl::Status FromGrpc(const grpc::Status& st, std::string_view address) {
  if (st.ok()) return absl::OkStatus();
  std::string msg = st.error_message();
  if (st.error_code() == grpc::StatusCode::UNAVAILABLE) msg = gantry::StrCat(address, ": ", msg);
  return absl::Status(static_cast<absl::StatusCode>(st.error_code()), msg);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AdminClient>> AdminClient::Connect(const ClientOptions& o) {
  if (o.address.empty()) return absl::InvalidArgumentError("--server: empty address");
  std::shared_ptr<grpc::ChannelCredentials> creds;
  const bool use_tls = o.tls || !o.tls_ca_file.empty() || !o.tls_cert_file.empty() ||
                       (!o.insecure && !IsLoopback(o.address));
  if (use_tls) {
    grpc::SslCredentialsOptions ssl;
    if (!o.tls_ca_file.empty()) {
      absl::StatusOr<std::string> ca = ReadFile("--tls-ca-file", o.tls_ca_file);
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *ca;
    }
    if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
      return absl::InvalidArgumentError("--tls-cert-file and --tls-key-file go together");
    }
    if (!o.tls_cert_file.empty()) {
      absl::StatusOr<std::string> cert = ReadFile("--tls-cert-file", o.tls_cert_file);
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadFile("--tls-key-file", o.tls_key_file);
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    creds = grpc::SslCredentials(ssl);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(o.address, creds, args);
  return std::unique_ptr<AdminClient>(
      new AdminClient(v1::Admin::NewStub(channel), o.address, o.timeout_millis));
}

template <typename Req, typename Resp, typename Call>
absl::StatusOr<Resp> AdminClient::Unary(const Req& request, Call call) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_millis_));
  Resp resp;
  if (absl::Status st = FromGrpc((stub_.get()->*call)(&ctx, request, &resp), address_); !st.ok())
    return st;
  return resp;
}

absl::StatusOr<v1::ExplainResponse> AdminClient::Explain(const v1::ExplainRequest& request) {
  return Unary<v1::ExplainRequest, v1::ExplainResponse>(request, &v1::Admin::Stub::Explain);
}

absl::StatusOr<v1::WhatIfResponse> AdminClient::WhatIf(const v1::WhatIfRequest& request) {
  return Unary<v1::WhatIfRequest, v1::WhatIfResponse>(request, &v1::Admin::Stub::WhatIf);
}

}  // namespace gantry::admin
