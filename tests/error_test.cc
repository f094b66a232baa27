// How exceptions from libtorch and the standard library reach a user: one
// line naming what Tessera was doing, the backtrace only with TESSERA_DEBUG.
#include <torch/torch.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "tessera/base/error.h"

namespace tessera {
namespace {

// A real libtorch error: data_ptr of an undefined tensor.
void libtorch_fails() { (void)torch::Tensor().data_ptr<float>(); }

TEST(Errors, LibtorchErrorBecomesOneLineWithItsContexts) {
  ::unsetenv("TESSERA_DEBUG");
  try {
    with_context([] { return std::string("training step 3"); },
                 [] { with_context([] { return std::string("R-GCN layer 1"); }, [] { libtorch_fails(); }); });
    FAIL() << "no exception";
  } catch (const InternalError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("training step 3: R-GCN layer 1: ", 0), 0u) << m;
    EXPECT_NE(m.find("expected scalar type Float"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find("frame #"), std::string::npos) << m;
    EXPECT_EQ(m.find("Exception raised from"), std::string::npos) << m;
  }
}

TEST(Errors, TesseraErrorsPassUnchangedAndDebugKeepsTheBacktrace) {
  try {
    with_context([] { return std::string("outer"); }, [] { fail("bad flag --x"); });
  } catch (const InternalError&) {
    FAIL() << "a tessera::Error is not internal";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bad flag --x");
  }
  EXPECT_EQ(describe(std::bad_alloc()), "out of memory");
  EXPECT_EQ(describe(std::out_of_range("vector::at")), "vector::at");
  ::setenv("TESSERA_DEBUG", "1", 1);
  try {
    libtorch_fails();
  } catch (const std::exception& e) {
    EXPECT_NE(describe(e).find("Exception raised from"), std::string::npos) << describe(e);
  }
  ::unsetenv("TESSERA_DEBUG");
}

}  // namespace
}  // namespace tessera
