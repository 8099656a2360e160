// The fixture of the module tests: the fake driver installed around each
// test, a module directory (TestModule.h) and the module loaded from it,
// and the params the fake saw at a launch.
#ifndef FP8RT_UNITTESTS_MODULEFIXTURE_H
#define FP8RT_UNITTESTS_MODULEFIXTURE_H

#include "FakeDriver.h"
#include "Module.h"
#include "TestModule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace fp8rt::testing {

class ModuleFixture : public ::testing::Test {
protected:
  FakeDriver &fake = FakeDriver::get();
  ModuleDirectory dir;
  fp8rt_module *module = nullptr;

  void SetUp() override {
    fake.reset();
    setDriverForTesting(&fake.api);
  }
  void TearDown() override {
    fp8rt_module_destroy(module);
    setDriverForTesting(nullptr);
    fake.reset();
  }

  // The fake copies each launch's params by its kernel's param sizes.
  void sizeParams() {
    for (const auto &entry : module->kernels) {
      std::vector<size_t> &sizes =
          fake.paramSizesByKernel[entry.second->meta.entry];
      for (const ParamSpec &param : entry.second->meta.params)
        sizes.push_back(param.size);
    }
  }

  static uint64_t param(const LaunchCall &launch, size_t i) {
    uint64_t value = 0;
    if (i >= launch.params.size()) {
      ADD_FAILURE() << "no param " << i << " (call sizeParams)";
      return value;
    }
    std::memcpy(&value, launch.params[i].data(),
                std::min(sizeof(value), launch.params[i].size()));
    return value;
  }
};

} // namespace fp8rt::testing

#endif // FP8RT_UNITTESTS_MODULEFIXTURE_H
