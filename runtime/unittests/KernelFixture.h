// A test fixture for launching one kernel through the runtime with the fake
// driver: load it from memory, launch, and check that bad operands are
// rejected (naming the operand) before any driver call.
#ifndef FP8RT_UNITTESTS_KERNELFIXTURE_H
#define FP8RT_UNITTESTS_KERNELFIXTURE_H

#include "FakeDriver.h"
#include "Kernel.h"
#include "TestKernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace fp8rt::testing {

// The operand of `ops` called `name` (a test failure if there is none).
inline fp8rt_tensor &operand(std::vector<fp8rt_tensor> &ops,
                             const std::string &name) {
  for (fp8rt_tensor &t : ops)
    if (name == t.name)
      return t;
  ADD_FAILURE() << "test bug: no operand " << name;
  return ops[0];
}

class KernelFixture : public ::testing::Test {
protected:
  FakeDriver &fake = FakeDriver::get();
  fp8rt_kernel *kernel = nullptr;

  void SetUp() override {
    fake.reset();
    setDriverForTesting(&fake.api);
  }
  void TearDown() override {
    fp8rt_kernel_destroy(kernel);
    setDriverForTesting(nullptr);
    fake.reset();
  }

  void load(const std::string &json, const std::string &ptx) {
    ASSERT_EQ(fp8rt_kernel_load_from_memory(json.c_str(), ptx.c_str(), 0,
                                            &kernel),
              FP8RT_SUCCESS)
        << fp8rt_last_error();
    for (const ParamSpec &param : kernel->meta.params)
      fake.paramSizes.push_back(param.size);
  }

  fp8rt_status launch(const std::vector<fp8rt_tensor> &ops) {
    return fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                        nullptr);
  }

  // `ops` is rejected as an argument error whose message contains
  // `message`, and the driver was never asked to launch.
  void expectRejected(const std::vector<fp8rt_tensor> &ops,
                      const std::string &message) {
    EXPECT_EQ(launch(ops), FP8RT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
    EXPECT_TRUE(fake.launches.empty());
  }

  // The parameters of the only launch are these pointers, in order.
  void expectPointers(const std::vector<uintptr_t> &expected) {
    ASSERT_EQ(fake.launches.size(), 1u);
    const LaunchCall &call = fake.launches[0];
    ASSERT_EQ(call.params.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      uint64_t value;
      std::memcpy(&value, call.params[i].data(), sizeof(value));
      EXPECT_EQ(value, expected[i]) << "param " << i;
    }
  }
};

} // namespace fp8rt::testing

#endif // FP8RT_UNITTESTS_KERNELFIXTURE_H
