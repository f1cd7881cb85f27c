// Linked into a test binary (alwayslink), this points the ICD loader at mockcl and POCL before
// the first OpenCL call, so the same device-parameterised tests run on the mock's device(s) too.
// The binary needs data = ["//mockcl:libmockcl.so"] and env LIBMOCKCL_SO = its rootpath (and
// MOCKCL_DEVICES for devices other than the default one).
//
// It also fails the run when any test made a mock device report a command that used a buffer
// while it was mapped (maps=copy devices; mockcl Reports::used_while_mapped), naming the tests.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "mockcl/testing.h"

namespace {

std::unique_ptr<mockcl::controller>& control() {
  static std::unique_ptr<mockcl::controller> c;
  return c;
}

std::vector<std::string>& offenders() {
  static std::vector<std::string> v;
  return v;
}

class map_rule_listener : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { before_ = count(); }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::uint64_t after = count();
    if (after == before_) return;
    const auto& messages = control()->snapshot().reports.messages;
    offenders().push_back(std::string(info.test_suite_name()) + "." + info.name() + ": " +
                          std::to_string(after - before_) + " command(s) used a mapped buffer" +
                          (messages.empty() ? "" : " (last: " + messages.back() + ")"));
  }
  static std::uint64_t count() { return control()->snapshot().reports.used_while_mapped; }
  std::uint64_t before_ = 0;
};

class map_rule_environment : public ::testing::Environment {
  void TearDown() override {
    for (const std::string& o : offenders()) ADD_FAILURE() << "OpenCL map rule broken: " << o;
  }
};

const bool installed = [] {
  const std::string so = mockcl::testing::mock_so_path();
  mockcl::testing::use_mock_and_pocl(so);
  control() = mockcl::testing::icd_control(so);
  ::testing::UnitTest::GetInstance()->listeners().Append(new map_rule_listener);
  ::testing::AddGlobalTestEnvironment(new map_rule_environment);
  return true;
}();

}  // namespace
