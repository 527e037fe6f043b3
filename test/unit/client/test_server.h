// A local cpp-httplib server on 127.0.0.1 (ephemeral port) for client tests.
#ifndef GANTRY_TEST_UNIT_CLIENT_TEST_SERVER_H_
#define GANTRY_TEST_UNIT_CLIENT_TEST_SERVER_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "httplib.h"

namespace gantry::client::testing {

template <typename Server>
class Running {
 public:
  explicit Running(std::unique_ptr<Server> server) : server_(std::move(server)) {
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Running() {
    server_->stop();
    thread_.join();
  }
  Server& server() { return *server_; }
  int port() const { return port_; }

 private:
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::thread thread_;
};

// Answers 200 with a chunked body and then sends nothing (no data, no FIN)
// until *release becomes true or the client goes away: a stalled watch.
inline void HoldOpenWithoutData(httplib::Response& res, std::shared_ptr<std::atomic<bool>> release,
                                const std::string& content_type = "application/json") {
  res.set_chunked_content_provider(content_type, [release](size_t, httplib::DataSink& sink) {
    if (release->load() || !sink.is_writable()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return true;
  });
}

}  // namespace gantry::client::testing

#endif  // GANTRY_TEST_UNIT_CLIENT_TEST_SERVER_H_
