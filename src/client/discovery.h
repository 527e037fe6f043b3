// API discovery: which group/versions and resources the server serves, so
// Gantry only starts reflectors for APIs that exist (a cluster without DRA
// or without scheduling.k8s.io/v1beta1 is normal, not an error).
#ifndef GANTRY_SRC_CLIENT_DISCOVERY_H_
#define GANTRY_SRC_CLIENT_DISCOVERY_H_

#include <atomic>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "src/client/http.h"

namespace gantry::client {

class Discovery {
 public:
  // Reads /api and /apis, then the resource lists of `interesting`
  // group/versions ("v1", "policy/v1", ...) that are served.
  static absl::StatusOr<Discovery> Fetch(HttpClient& client, const std::vector<std::string>& interesting,
                                         const std::atomic<bool>* stop = nullptr);
  // For tests and offline use.
  static Discovery FromLists(std::vector<std::string> group_versions,
                             std::vector<std::pair<std::string, std::string>> resources);

  bool ServesGroupVersion(std::string_view gv) const;
  // Needs the group/version among `interesting` at Fetch time.
  bool ServesResource(std::string_view gv, std::string_view resource) const;
  const std::set<std::string>& group_versions() const { return group_versions_; }

  // "/api/v1" or "/apis/<group>/<version>".
  static std::string PathPrefix(std::string_view gv);

 private:
  std::set<std::string> group_versions_;
  std::set<std::pair<std::string, std::string>> resources_;
};

}  // namespace gantry::client

#endif  // GANTRY_SRC_CLIENT_DISCOVERY_H_
