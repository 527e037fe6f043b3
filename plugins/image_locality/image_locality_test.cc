#include "plugins/image_locality/image_locality.h"

#include "absl/container/flat_hash_map.h"
#include "gantry/util/strings.h"
#include "gtest/gtest.h"
#include "plugins/helper/plugin_test_util.h"
#include "test/testing/objects.h"

namespace gantry::plugins::image_locality {
namespace {

struct Image {
  std::vector<std::string> names;
  int64_t mb;
};

api::Pod PodWithImages(const std::vector<std::string>& images) {
  std::string containers;
  for (size_t i = 0; i < images.size(); ++i) {
    gantry::StrAppend(&containers, i ? ", " : "", "{name: c", i, ", image: '", images[i], "'}");
  }
  return gantry::testing::ParsePod(gantry::StrCat("metadata: {name: p}\nspec: {containers: [", containers, "]}"));
}

// Builds NodeInfos with image states the way the snapshot does: one entry
// per image name, num_nodes counting the nodes that report that name.
void AddNodes(gantry::testing::FakeHandle& handle, const std::vector<std::vector<Image>>& nodes) {
  absl::flat_hash_map<std::string, int32_t> spread;
  for (const auto& images : nodes) {
    for (const Image& img : images) {
      for (const std::string& n : img.names) spread[n]++;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto ni = gantry::testing::MakeNodeInfo(gantry::testing::SimpleNode(gantry::StrCat("n", i), 1000, 1000));
    for (const Image& img : nodes[i]) {
      for (const std::string& n : img.names) {
        ni->image_states()[api::Symbol::Intern(n)] = {img.mb * kMiB, spread[n]};
      }
    }
    handle.AddNode(std::move(ni));
  }
}

// Rows follow upstream's TestImageLocalityPriority.
TEST(ImageLocality, Score) {
  const std::vector<Image> node403002000 = {{{"gcr.io/40:latest", "gcr.io/40:v1"}, 40},
                                            {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300},
                                            {{"gcr.io/2000:latest"}, 2000}};
  const std::vector<Image> node25010 = {{{"gcr.io/250:latest"}, 250}, {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10}};
  const std::vector<Image> node60040900 = {{{"gcr.io/600:latest"}, 600}, {{"gcr.io/40:latest"}, 40},
                                           {{"gcr.io/900:latest"}, 900}};
  const std::vector<Image> node300600900 = {{{"gcr.io/300:latest"}, 300}, {{"gcr.io/600:latest"}, 600},
                                            {{"gcr.io/900:latest"}, 900}};
  const std::vector<Image> node400030 = {{{"gcr.io/4000:latest"}, 4000}, {{"gcr.io/30:latest"}, 30}};
  const std::vector<Image> node203040 = {{{"gcr.io/20:latest"}, 20}, {{"gcr.io/30:latest"}, 30},
                                         {{"gcr.io/40:latest"}, 40}};
  struct Case {
    const char* name;
    std::vector<std::string> pod;
    std::vector<std::vector<Image>> nodes;
    std::vector<int64_t> want;
  } cases[] = {
      {"two images spread on two nodes, prefer the larger image one", {"gcr.io/40", "gcr.io/250"},
       {node403002000, node25010}, {0, 5}},
      {"two images on one node, prefer this node", {"gcr.io/40", "gcr.io/300"}, {node403002000, node25010}, {7, 0}},
      {"if exceed limit, use limit", {"gcr.io/10", "gcr.io/4000"}, {node400030, node25010}, {100, 0}},
      {"if exceed limit, use limit (with node which has no container images)", {"gcr.io/10", "gcr.io/4000"},
       {node400030, node25010, {}}, {66, 0, 0}},
      {"Image has been pulled on all nodes", {"gcr.io/300", "gcr.io/600", "gcr.io/900"},
       {node60040900, node300600900, node400030}, {32, 36, 0}},
      {"Image has been pulled on all nodes (two images)", {"gcr.io/30", "gcr.io/40"}, {node203040, node400030},
       {1, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    gantry::testing::FakeHandle handle;
    AddNodes(handle, c.nodes);
    ImageLocality pl(handle);
    auto pod = gantry::testing::MakePodInfo(PodWithImages(c.pod));
    std::vector<const framework::NodeInfo*> nodes(handle.NodeInfos().begin(), handle.NodeInfos().end());
    framework::Status st;
    EXPECT_EQ(testing::RunScore(pl, *pod, nodes, &st), c.want);
    EXPECT_TRUE(st.IsSuccess());
  }
}

TEST(ImageLocality, NormalizedImageName) {
  EXPECT_EQ(NormalizedImageName("nginx"), "nginx:latest");
  EXPECT_EQ(NormalizedImageName("nginx:1.25"), "nginx:1.25");
  EXPECT_EQ(NormalizedImageName("registry:5000/nginx"), "registry:5000/nginx:latest");
  EXPECT_EQ(NormalizedImageName("nginx@sha256:abc"), "nginx@sha256:abc");
}

TEST(ImageLocality, CalculatePriority) {
  EXPECT_EQ(CalculatePriority(0, 1), 0);
  EXPECT_EQ(CalculatePriority(kMaxContainerThreshold, 1), 100);
  EXPECT_EQ(CalculatePriority(5 * kMaxContainerThreshold, 2), 100);
  EXPECT_EQ(CalculatePriority(123, 0), 0);
}

}  // namespace
}  // namespace gantry::plugins::image_locality
