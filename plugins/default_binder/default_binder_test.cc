#include "plugins/default_binder/default_binder.h"

#include "gtest/gtest.h"
#include "test/testing/objects.h"

namespace gantry::plugins::default_binder {
namespace {

class FailingHandle : public gantry::testing::FakeHandle {
 public:
  absl::Status BindPod(const api::Pod&, std::string_view) override {
    return absl::AlreadyExistsError("pod default/p is already assigned to node \"other\"");
  }
};

TEST(DefaultBinder, BindsThroughWriter) {
  gantry::testing::FakeHandle handle;
  DefaultBinder pl(handle);
  auto pod = gantry::testing::MakePodInfo(gantry::testing::SimplePod("p", 0, 0));
  framework::CycleState state;
  framework::Status st = pl.Bind(state, *pod, "node-1");
  EXPECT_TRUE(st.IsSuccess());
  ASSERT_EQ(handle.bindings.size(), 1u);
  EXPECT_EQ(handle.bindings[0].first, "default/p");
  EXPECT_EQ(handle.bindings[0].second, "node-1");
}

TEST(DefaultBinder, WriterErrorIsError) {
  FailingHandle handle;
  DefaultBinder pl(handle);
  auto pod = gantry::testing::MakePodInfo(gantry::testing::SimplePod("p", 0, 0));
  framework::CycleState state;
  framework::Status st = pl.Bind(state, *pod, "node-1");
  EXPECT_EQ(st.code(), framework::Code::kError);
  EXPECT_EQ(st.Message(), "pod default/p is already assigned to node \"other\"");
}

}  // namespace
}  // namespace gantry::plugins::default_binder
