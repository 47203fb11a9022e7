#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace kq::testing {

// A fresh directory under the test's temporary directory, removed with
// everything in it when this goes. Fails the test when it cannot be made.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& prefix = "kq_test") {
    std::string pattern =
        (std::filesystem::path(::testing::TempDir()) / (prefix + "_XXXXXX"))
            .string();
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << pattern << " failed";
      return;
    }
    path_ = pattern;
  }
  ~ScopedTempDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` in the directory.
  std::string File(const std::string& name) const {
    return (std::filesystem::path(path_) / name).string();
  }

 private:
  std::string path_;
};

}  // namespace kq::testing
